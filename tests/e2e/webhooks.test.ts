import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../lib/events/webhookEvent.ts';
import { projectRoot } from '../../local/project.ts';
import { readCachedServerlessConfig } from '../../local/serverlessConfig.ts';
import { personalValues, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

/** What the sandbox webhook receiver lists: the signed event as the client's webhook got it, and whether it verified. */
interface Received {
  client: string;
  receivedAt: string;
  verified: boolean;
  webhookId: string;
  event: WebhookEvent;
}

let dir: string;
let service: RunningService;
let receiverUrl: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-webhooks-e2e-'));
  // Short webhook backoff, so that an event held back by a failing webhook arrives within seconds of recovery.
  service = await npmStart({
    DATA_DIR: dir,
    WEBHOOK_RETRY_BASE_SECONDS: '1',
    WEBHOOK_RETRY_CAP_SECONDS: '1',
  });
  const runner = JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8')) as {
    env: Record<string, string>;
  };
  receiverUrl = runner.env.LOCAL_WEBHOOK_RECEIVER_URL;
}, 90_000);
afterAll(async () => {
  await service?.stop();
  await rm(dir, { recursive: true, force: true });
});

const postSale = async (sale: Record<string, unknown>): Promise<string> => {
  const response = await fetch(`${service.url}/erp/sales_registration`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
    body: JSON.stringify([sale]),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { registrations: { id: string }[] }).registrations[0].id;
};

const lookUp = async (path: string) => {
  const response = await fetch(`${service.url}${path}`, {
    headers: { 'x-api-key': service.keys['example-dealer'] },
  });
  return (await response.json()) as Record<string, unknown>;
};

/** Polls the status look-up until the record leaves `accepted`; its state and how long that took. */
const settled = async (id: string) => {
  const started = Date.now();
  for (;;) {
    const status = (await lookUp(`/erp/sales_registration/${id}`)).status as string;
    if (status !== 'accepted' || Date.now() - started > 20_000)
      return { status, afterMs: Date.now() - started };
    await sleep(100);
  }
};

/** `npm run -s records -- <args>` against this npm start (its data directory), as an operator runs it. */
const records = (...args: string[]) =>
  new Promise<{ code: number; stdout: string }>((resolve) => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(npm_|AWS_)/i.test(name)),
    );
    execFile(
      'npm',
      ['run', '-s', 'records', '--', ...args],
      { cwd: projectRoot, env: { ...env, DATA_DIR: dir }, timeout: 30_000 },
      (error, stdout) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });

const received = async (): Promise<Received[]> =>
  (await (await fetch(`${receiverUrl}/hooks/example-dealer`)).json()) as Received[];

/** The receiver's event of this record in this state, once it has arrived (or undefined after `timeoutMs`). */
const eventOf = async (recordId: string, state: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await received()).find(
      (r) => r.verified && r.event.data.recordId === recordId && r.event.data.state === state,
    );
    if (found || Date.now() > deadline) return found;
    await sleep(100);
  }
};

describe('npm start: a client webhook is told when its records are decided', () => {
  it('runs every function of serverless.yml through its own handler, the dispatcher from the webhook queue', async () => {
    // Prepare: what serverless.yml declares (the last `osls print` of this serverless.yml).
    const config = await readCachedServerlessConfig();
    // Act: what this npm start invokes (runner.json: serverless-offline's routes, the pollers and schedules started).
    const runner = JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8')) as {
      functions: { functionName: string; handler: string; invokedBy: string }[];
    };
    // Assess
    expect(config).toBeDefined();
    for (const [name, fn] of Object.entries(config?.functions ?? {}))
      expect(runner.functions, name).toContainEqual(
        expect.objectContaining({ functionName: name, handler: fn.handler }),
      );
    expect(runner.functions).toContainEqual({
      functionName: 'webhookDispatcher',
      handler: 'functions/webhookDispatcher.handler',
      invokedBy: 'poller WebhookQueue',
    });
  });

  it('gets `delivered` for a sale and `rejected` with the sandbox reason for its frame number registered again', async () => {
    // Prepare
    const frame = uniqueFrame('WH');
    const first = await postSale(salesRegistrationInput({ FrameNum: frame }));
    expect((await settled(first)).status).toBe('delivered');
    // Act: the same frame number in another sale (the same content again would be the same record, by its content);
    // the SAP sandbox refuses a frame number registered twice.
    const second = await postSale(salesRegistrationInput({ FrameNum: frame, Model: 'CB500F' }));
    const outcome = await settled(second);
    const rejected = await eventOf(second, 'rejected', 5000);
    const delivered = await eventOf(first, 'delivered', 1000);
    // Assess
    expect(second).not.toBe(first);
    expect(outcome.status).toBe('rejected');
    expect(rejected?.webhookId).toMatch(new RegExp(`^${second}:`));
    expect(rejected?.event).toMatchObject({
      type: 'record.rejected',
      data: {
        recordId: second,
        kind: 'salesRegistration',
        state: 'rejected',
        previousState: 'accepted',
        attempts: 1,
        FrameNum: frame,
        DealerId: 1234,
        error: expect.stringContaining('already registered'),
      },
    });
    // Within seconds of the change of state (receivedAt and the event's timestamp are both this machine's clock).
    const lagMs = Date.parse(rejected?.receivedAt ?? '') - Date.parse(rejected?.event.timestamp ?? '');
    process.stderr.write(`webhook e2e: rejected event received ${lagMs} ms after the state changed\n`);
    expect(lagMs).toBeLessThan(10_000); // "within seconds", with room for a loaded CI machine
    expect(delivered?.event.data).toMatchObject({
      recordId: first,
      state: 'delivered',
      downstreamId: expect.any(String),
    });
    // Every post verified (Standard Webhooks, the receiver's standardwebhooks library); none with personal data.
    expect((await received()).filter((r) => !r.verified)).toEqual([]);
    const everything = JSON.stringify(await received());
    for (const value of personalValues) expect(everything).not.toContain(value);
    // Both records are found by their frame number.
    const byFrame = await lookUp(`/erp/sales_registration?FrameNum=${frame}`);
    expect((byFrame.records as { id: string }[]).map((r) => r.id).sort()).toEqual([first, second].sort());
    // And the operators' listing finds the rejected one.
    const listing = await records('--status', 'rejected', '--frame', frame, '--json');
    expect(listing.code).toBe(0);
    expect(
      listing.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    ).toEqual([second]);
  });

  it('delivers to SAP as fast while the webhook fails, and the event arrives once the webhook is back', async () => {
    // Prepare: a baseline delivery, then the webhook answers 503 to everything.
    const baseline = await settled(await postSale(salesRegistrationInput({ FrameNum: uniqueFrame('WHB') })));
    const faults = await fetch(`${receiverUrl}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 503, count: 1000, client: 'example-dealer' }),
    });
    expect(faults.status).toBe(200);
    // Act
    const id = await postSale(salesRegistrationInput({ FrameNum: uniqueFrame('WHD') }));
    const whileDown = await settled(id);
    await sleep(1500); // a few webhook attempts fail meanwhile
    const missedWhileDown = await eventOf(id, 'delivered', 0);
    const left = (await (await fetch(`${receiverUrl}/hooks/_faults`)).json()) as {
      faults: { count: number }[];
    };
    await fetch(`${receiverUrl}/hooks/_faults`, { method: 'DELETE' });
    const recoveredAt = Date.now();
    const arrived = await eventOf(id, 'delivered', 10_000);
    // Assess
    expect(whileDown.status).toBe('delivered');
    expect(whileDown.afterMs).toBeLessThan(Math.max(8000, baseline.afterMs * 4));
    expect(missedWhileDown).toBeUndefined();
    expect(left.faults[0].count).toBeLessThan(1000); // the webhook was called, and failed
    expect(arrived?.event.data).toMatchObject({ recordId: id, state: 'delivered' });
    expect(Date.now() - recoveredAt).toBeLessThan(10_000); // retries about 1 s apart here
  });
  it('loses no event across a restart: one held back by a failing webhook arrives after npm start starts again', async () => {
    // Prepare: the webhook fails; a sale is delivered, its event waits for the webhook.
    await fetch(`${receiverUrl}/hooks/_faults`, {
      method: 'POST',
      body: JSON.stringify({ status: 503, count: 1000, client: 'example-dealer' }),
    });
    const id = await postSale(salesRegistrationInput({ FrameNum: uniqueFrame('WHR') }));
    expect((await settled(id)).status).toBe('delivered');
    await sleep(500);
    expect(await eventOf(id, 'delivered', 0)).toBeUndefined();
    const before = (await received()).length;
    // Act: stop and start again on the same data directory (the new receiver has no faults).
    expect(await service.stop()).toBe(true);
    service = await npmStart({
      DATA_DIR: dir,
      WEBHOOK_RETRY_BASE_SECONDS: '1',
      WEBHOOK_RETRY_CAP_SECONDS: '1',
    });
    receiverUrl = (
      JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8')) as { env: Record<string, string> }
    ).env.LOCAL_WEBHOOK_RECEIVER_URL;
    const arrived = await eventOf(id, 'delivered', 10_000);
    // Assess: the held-back event arrived, and what the receiver had before the restart is still listed.
    expect(arrived?.event.data).toMatchObject({ recordId: id, state: 'delivered' });
    expect((await received()).length).toBeGreaterThanOrEqual(before + 1);
  }, 120_000);
});
