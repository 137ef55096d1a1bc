/**
 * The service's promise under explored interleavings, not sampled ones: intake (the sales handler), two workers
 * (the SQS event source and deliverRecord), the reconciler (queue again, then publish outboxes), and a redrive by
 * hand run together against the real local store (dynalite), queues (fauxqs), the SAP sandbox and a recording
 * event bus, with fast-check's scheduler choosing which of them takes its next AWS call. Every DynamoDB, SQS and
 * EventBridge call of every actor waits for the scheduler; the scheduler releases one call at a time and picks the
 * next only when every actor is parked again at its next call (or done), so a run is one order of steps, the same
 * for the same seed. The bus fails chosen PutEvents calls, and SAP may fail the first delivery (a `failed` record
 * gives the redrive something to do). After the run the service is drained (time moves on, the reconciler and the
 * workers run until every record settles). Then: no record lost, none delivered twice, nothing stuck, and every
 * change of state (each step of a record's history but a retry) published at least once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { dynamoClient, eventBridgeClient, sqsClient } from '../../lib/aws/clients.ts';
import type { JsonCommand } from '../../lib/aws/jsonProtocol/client.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { publishDueEvents } from '../../lib/outbox/publish.ts';
import { reconcileOpenRecords } from '../../lib/reconcile/reconcile.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { redriveByHand } from '../../lib/redrive/redrive.ts';
import type { DeliverySettings } from '../../lib/settings/settings.ts';
import { statusRecordsIn } from '../../lib/store/statusIndex.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';

vi.hoisted(() => {
  // Hundreds of runs: the service's own log lines would only bury a counterexample.
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

/**
 * Runs explored: each is a fresh table, queues and SAP sandbox, a few hundred milliseconds. About one run in 40
 * met the outbox race (a publisher emptying an outbox that another had appended to; docs/design.md,
 * "Events and webhooks") before its fix (this seed at its 35th); EXPLORE_RUNS and EXPLORE_SEED search
 * further by hand (e.g. EXPLORE_RUNS=1000).
 */
const RUNS = Number(process.env.EXPLORE_RUNS ?? 50);
/** Fixed, so that a failure names the same interleaving on every machine and every run. */
const SEED = Number(process.env.EXPLORE_SEED ?? 1805);
/** A worker's attempts: one, so that a failed delivery makes a `failed` record at once, for the redrive. */
const SETTINGS: DeliverySettings = { maxAttempts: 1, retryBaseSeconds: 1, leaseSeconds: 90 };
/** Each released call moves the clock on a second (distinct `at` for every change, leases still held). */
const STEP_MS = 1_000;

let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
let clock = Date.parse('2026-11-22T08:00:00.000Z');

// ---------------------------------------------------------------------------------------------------------------
// The scheduling seam: every AWS call of an actor waits for the scheduler.

const actorOf = new AsyncLocalStorage<string>();

/** One run's scheduling: who is still running, who is parked at a call, and which bus calls fail. */
class Interleaving {
  readonly live = new Set<string>();
  readonly parked = new Map<string, number>();
  /** Set when an actor made two calls at once: the order would no longer be the scheduler's alone. */
  concurrentActor: string | undefined;
  private waiters: (() => void)[] = [];
  private putEventsCalls = 0;

  readonly s: fc.Scheduler;
  private readonly busFails: readonly boolean[];

  constructor(s: fc.Scheduler, busFails: readonly boolean[]) {
    this.s = s;
    this.busFails = busFails;
  }

  /** Every live actor is parked at a call (or none is left): the scheduler may choose the next. */
  private isQuiet() {
    return [...this.live].every((actor) => (this.parked.get(actor) ?? 0) > 0);
  }

  private wake() {
    if (!this.isQuiet()) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  quiet(): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.wake();
    });
  }

  /** Runs an actor: its calls are scheduled under its name. */
  start(name: string, act: () => Promise<unknown>): Promise<unknown> {
    this.live.add(name);
    return actorOf.run(name, async () => {
      try {
        return await act();
      } catch (error) {
        return error;
      } finally {
        this.live.delete(name);
        this.wake();
      }
    });
  }

  /** Parks the calling actor until the scheduler releases this call; the release waits for the next quiet. */
  async gate<T>(label: string, call: () => Promise<T>): Promise<T> {
    const actor = actorOf.getStore();
    if (actor === undefined) return call();
    const parkedBefore = this.parked.get(actor) ?? 0;
    if (parkedBefore > 0) this.concurrentActor = actor;
    this.parked.set(actor, parkedBefore + 1);
    this.wake();
    await this.s.schedule(Promise.resolve(), `${actor}: ${label}`, undefined, async (release) => {
      this.parked.set(actor, (this.parked.get(actor) ?? 1) - 1);
      clock += STEP_MS;
      vi.setSystemTime(clock);
      await release();
      await this.quiet();
    });
    if (label !== 'EventBridge PutEvents') return call();
    const fails = this.busFails[this.putEventsCalls++] ?? false;
    if (!fails) return call();
    bus.setMode('down');
    try {
      return await call();
    } finally {
      bus.setMode('up');
    }
  }
}

let current: Interleaving | undefined;

/** Puts the seam into a client's `send`: the service's own clients and the ones the tests hand to it. */
const gateSend = <C extends { send: (...args: never[]) => Promise<unknown> }>(
  client: C,
  service: string,
): C => {
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as { send: unknown }).send = (command: unknown, ...rest: unknown[]) => {
    const operation =
      (command as Partial<JsonCommand>).operation ??
      (command as object).constructor.name.replace(/Command$/, '');
    const call = () => send(command, ...rest);
    return current ? current.gate(`${service} ${operation}`, call) : call();
  };
  return client;
};

// ---------------------------------------------------------------------------------------------------------------
// The actors

type Aws = Awaited<ReturnType<typeof freshAws>>;

const SALE = salesRegistrationInput({ FrameNum: 'JH2PC40A1XM900001' });

const intake = async () => {
  const answer = await salesHandler(jsonPost('/erp/sales_registration', [SALE]), lambdaContext());
  if (answer.statusCode !== 200) throw new Error(`intake answered ${answer.statusCode}`);
  const { registrations } = JSON.parse(answer.body) as { registrations: { id: string }[] };
  return registrations.map((registration) => registration.id);
};

/** As the SQS event source hands a message to the worker function. */
const sqsRecordOf = (message: Message): SQSRecord =>
  ({
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1' },
  }) as unknown as SQSRecord;

/** The event source and one worker: polls a few times for a message, delivers it, deletes it when it succeeded. */
const worker = async (aws: Aws, sqs: SQSClient) => {
  const queueUrl = aws.resources.queues.SalesRegistrationQueue.url;
  for (let poll = 0; poll < 3; poll++) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 1,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 600,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    const [message] = out.Messages ?? [];
    if (!message) continue;
    await deliverRecord(sqsRecordOf(message), { settings: SETTINGS, log: logger, tally: new OutcomeTally() });
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    return;
  }
};

/**
 * The scheduled reconciler: two runs, each as lib/reconcile/reconcilerRun.ts makes it, a few minutes on (records
 * and events due). Two of them overlap, as runs do on AWS when one takes longer than its minute.
 */
const reconciler = async () => {
  for (let run = 0; run < 3; run++) {
    const now = new Date(Date.now() + 6 * 60_000);
    await reconcileOpenRecords({ now, kinds: ['salesRegistration'] });
    await publishDueEvents({ now, kinds: ['salesRegistration'] });
  }
};

/** An operator: looks for failed sales a few times, and redrives them by hand (the local queue) once one shows. */
const operator = async (aws: Aws, sqs: SQSClient) => {
  for (let look = 0; look < 8; look++) {
    const failed = await statusRecordsIn('salesRegistration', 'failed').next();
    if (failed.done) continue;
    return redriveByHand({
      sqs,
      kind: 'salesRegistration',
      queueUrl: aws.resources.queues.SalesRegistrationQueue.url,
      deadLetterQueueUrl: aws.resources.queues.SalesRegistrationDeadLetterQueue.url,
    });
  }
};

/** After the run: time moves on and the reconciler and a worker run, in turn, until nothing is left to do. */
const drain = async (aws: Aws, id: string) => {
  for (let round = 0; round < 6; round++) {
    clock += 3_600_000;
    vi.setSystemTime(clock);
    const now = new Date(clock);
    await reconcileOpenRecords({ now, kinds: ['salesRegistration'] });
    const out = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: aws.resources.queues.SalesRegistrationQueue.url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 600,
      }),
    );
    for (const message of out.Messages ?? [])
      await deliverRecord(sqsRecordOf(message), {
        settings: SETTINGS,
        log: logger,
        tally: new OutcomeTally(),
      }).catch(() => undefined);
    await publishDueEvents({ now: new Date(clock + 3_600_000), kinds: ['salesRegistration'] });
    const record = await getStatusRecord(id);
    if (record && record.status !== 'accepted' && !record.pendingEvents?.length) return;
  }
};

// ---------------------------------------------------------------------------------------------------------------
// The promise

/** The changes of state a record went through: every step of its history but a retry (still `accepted`). */
const changesOf = (record: StatusRecord) =>
  (record.history ?? [])
    .filter((step) => step.status !== 'accepted' || step.redriven)
    .map((step) => ({ eventId: `${record.id}:${step.at}`, state: step.status }));

/** What broke the promise in one run, or nothing. */
const broken = (record: StatusRecord | undefined, sap: SapSandbox): string[] => {
  if (!record) return ['record lost: accepted (200) but not in the store'];
  const problems: string[] = [];
  const processed = sap.requests.filter(
    (request) =>
      request.method === 'POST' &&
      request.status >= 200 &&
      request.status < 300 &&
      request.body.includes(`"RegistrationId":"${record.id}"`),
  );
  if (processed.length > 1) problems.push(`delivered twice: SAP answered ${processed.length} POSTs with 2xx`);
  if (record.status === 'delivered' && processed.length === 0)
    problems.push('delivered without reaching SAP');
  if (record.status === 'accepted') problems.push('stuck: still accepted after draining');
  if (record.pendingEvents?.length)
    problems.push(`stuck: ${record.pendingEvents.length} event(s) in the outbox`);
  const published = new Set(bus.details().map((detail) => `${detail.eventId}|${detail.state}`));
  for (const change of changesOf(record))
    if (!published.has(`${change.eventId}|${change.state}`))
      problems.push(`event lost: ${change.state} (${change.eventId}) never published`);
  return problems;
};

// ---------------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  bus = await startEventBridgeRecorder();
  await freshAws(); // the settings the service's clients are made with
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
  gateSend(dynamoClient(), 'DynamoDB');
  gateSend(sqsClient(), 'SQS');
  gateSend(eventBridgeClient(), 'EventBridge');
  vi.useFakeTimers({ toFake: ['Date'] });
});

afterAll(async () => {
  vi.useRealTimers();
  await bus.stop();
});

/** One interleaving: the actors under the scheduler, then the drain; the promise's breaches, with what happened. */
const explore = async (s: fc.Scheduler, busFails: boolean[], sapFailsFirst: boolean) => {
  // Prepare: a store, queues and SAP of this run's own; a day on, clear of the worker's pause after a bus failure.
  const aws = await freshAws();
  const sap = await startSapSandbox();
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
  });
  resetDownstreamClients();
  if (sapFailsFirst) sap.inject({ status: 503, message: 'Service temporarily unavailable' });
  bus.reset();
  clock += 86_400_000;
  vi.setSystemTime(clock);
  const sqs = gateSend(aws.sqs, 'SQS');
  const run = new Interleaving(s, busFails);
  current = run;
  try {
    // Act: every actor at once; the scheduler orders their calls.
    const actors = [
      run.start('intake', intake),
      run.start('worker-1', () => worker(aws, sqs)),
      run.start('worker-2', () => worker(aws, sqs)),
      run.start('reconciler-1', reconciler),
      run.start('reconciler-2', reconciler),
      run.start('operator', () => operator(aws, sqs)),
    ];
    await run.quiet();
    const [accepted] = await s.waitFor(Promise.all(actors));
    current = undefined;
    if (accepted instanceof Error) return [`intake: ${accepted.message}`];
    if (run.concurrentActor)
      return [`${run.concurrentActor} made two calls at once: the order is not explored`];
    const ids = accepted as string[];
    await drain(aws, ids[0]);
    // Assess
    return broken(await getStatusRecord(ids[0]), sap);
  } finally {
    current = undefined;
    await sap.stop();
  }
};

describe('interleavings of intake, workers, reconciler, event publishing and redrive', () => {
  it(
    'keep the promise: no record lost, none delivered twice, nothing stuck, no event lost',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
          fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
          async (s, busFails, sapFailsFirst) => {
            const problems = await explore(s, busFails, sapFailsFirst);
            expect(problems, `${s}`).toEqual([]);
          },
        ),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    },
    RUNS * 1_500,
  );
});
