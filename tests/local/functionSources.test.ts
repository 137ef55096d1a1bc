/**
 * Every function of serverless.yml runs under npm start through its own handler, on its own event source (HTTP:
 * serverless-offline; SQS: the poller; schedule: a timer), as AWS runs it: read from serverless.yml as the local
 * runner resolves it, against what the runner plans to invoke (local/functionSources.ts, which local/delivery.ts
 * starts; what it did start, it lists in runner.json, which tests/e2e/webhooks.test.ts reads from a real npm start).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { localFunctionSources } from '../../local/functionSources.ts';
import { type ResolvedServerlessConfig, resolvedServerlessConfig } from '../../local/serverlessConfig.ts';

let config: ResolvedServerlessConfig;
beforeAll(async () => {
  config = await resolvedServerlessConfig();
}, 60_000);

/** Each event of each function that npm start does not invoke through the function's handler, as a line. */
const notInvoked = (resolved: ResolvedServerlessConfig): string[] => {
  const { sources, unserved } = localFunctionSources(resolved);
  const missing = unserved.map((u) => `${u.functionName}: ${u.event} (${u.why})`);
  for (const [name, fn] of Object.entries(resolved.functions ?? {})) {
    const events = (fn.events ?? []) as Record<string, unknown>[];
    const invoked = sources.filter((source) => source.functionName === name && source.handler === fn.handler);
    for (const kind of new Set(events.map((event) => Object.keys(event)[0]))) {
      const declared = events.filter((event) => Object.keys(event)[0] === kind).length;
      const served = invoked.filter((source) => source.kind === kind).length;
      if (served < declared && !missing.some((line) => line.startsWith(`${name}: ${kind}`)))
        missing.push(`${name}: ${kind} (${declared - served} of ${declared} not invoked)`);
    }
  }
  return missing;
};

describe('npm start invokes every function of serverless.yml as AWS does', () => {
  it('serves each function’s events through its own handler: HTTP, queues and schedules', () => {
    // Act
    const missing = notInvoked(config);
    const kinds = Object.fromEntries(
      localFunctionSources(config).sources.map((source) => [source.functionName, source.kind]),
    );
    // Assess
    expect(missing).toEqual([]);
    expect(Object.keys(kinds).sort()).toEqual(Object.keys(config.functions ?? {}).sort());
    expect(kinds).toMatchObject({
      salesRegistration: 'http',
      erpDelivery: 'sqs',
      crmDelivery: 'sqs',
      webhookDispatcher: 'sqs',
      reconciler: 'schedule',
    });
  });

  it('(control) reports a function npm start would not invoke: an event source it lacks, a cron schedule', () => {
    // Prepare: serverless.yml with a function on S3 events and the reconciler on a cron schedule.
    const planted = structuredClone(config);
    planted.functions = {
      ...planted.functions,
      archive: { handler: 'functions/archive.handler', events: [{ s3: { bucket: 'b' } }] },
      reconciler: { ...planted.functions?.reconciler, events: [{ schedule: { rate: 'cron(0 * * * ? *)' } }] },
    };
    // Act
    const missing = notInvoked(planted);
    // Assess
    expect(missing).toEqual([
      'reconciler: schedule (only rate(...) schedules run locally)',
      'archive: s3 (npm start has no event source of this kind)',
    ]);
  });
});
