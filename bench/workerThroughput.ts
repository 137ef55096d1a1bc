/**
 * Worker throughput: sales registrations delivered per second by functions/deliveryWorker.ts, driven by
 * `pollOnce` (local/queuePoller.ts, batch 10) as Lambda's event source would, against the real local
 * queue and store (fauxqs, dynalite: bench/localAws.ts) and an instant SAP Gateway (bench/instantSap.ts), each
 * in its own process, and the local event bus (local/eventBus.ts) in the parent process. Baseline: a bare
 * loop making the calls the brief names with the same clients: ReceiveMessage (10); per message, in parallel as the
 * worker's batch processor does: the claim (a conditional UpdateItem with a lease, which keeps two copies of a
 * message from reaching SAP together), POST to SAP (fetch), the outcome UpdateItem (with the event in the outbox),
 * PutEvents of the event and the UpdateItem that empties the outbox; then DeleteMessageBatch.
 *
 * Records are pre-accepted for each block: status records and messages written with lib functions
 * (seedStatusRecords, sendRecords), so both sides deliver exactly the same kind of work.
 */

import type { JsonCommand, JsonProtocolClient, JsonSendOptions } from '../lib/aws/jsonProtocol/client.ts';
import { localClientConfig } from '../local/aws.ts';
import { startLocalEventBus } from '../local/eventBus.ts';
import { readSapCounts, SAP_PASSWORD, SAP_SERVICE_PATH, SAP_USER, startInstantSap } from './instantSap.ts';
import { startLocalAws } from './localAws.ts';
import { awsFreeEnv, benchDir, quietPowertools, runNodeJson } from './proc.ts';
import { cpuProfiler } from './profile.ts';

const BENCH_BUS = 'dealer-gateway-bench';

export interface WorkerSide {
  delivered: number;
  /** Deliveries per second over the measured blocks (sum of deliveries / sum of their wall time). */
  perSecond: number;
  /** CPU of the worker process per delivery, microseconds. */
  cpuUsPerDelivery: number;
  /** AWS calls per delivery by operation, as the SDK clients sent them. */
  callsPerDelivery: Record<string, number>;
  /** Downstream requests per delivery (POSTs; token fetches are counted apart). */
  sapPostsPerDelivery: number;
  sapTokenFetches: number;
}

export interface WorkerResult {
  records: number;
  ours: WorkerSide;
  bare: WorkerSide;
}

type Counts = Record<string, number>;

/** A middleware counting the commands a client sends (an initialize step: a map update per call). */
const countingMiddleware =
  (counts: Counts) =>
  <A, R>(next: (args: A) => Promise<R>, context: { commandName?: string }) =>
  (args: A): Promise<R> => {
    const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
    counts[name] = (counts[name] ?? 0) + 1;
    return next(args);
  };
const counting = { step: 'initialize', name: 'benchCountCommands' } as const;

/** The same count for the service's own (JSON-protocol) client: its `send` wrapped, a map update per call. */
const countJsonCalls = (client: JsonProtocolClient, counts: Counts) => {
  const send = client.send.bind(client);
  client.send = ((command: JsonCommand<object, object>, options?: JsonSendOptions) => {
    counts[command.operation] = (counts[command.operation] ?? 0) + 1;
    return send(command, options);
  }) as JsonProtocolClient['send'];
};

const child = async (): Promise<WorkerResult> => {
  const { marshall, unmarshall } = await import('@aws-sdk/util-dynamodb');
  const { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } = await import('@aws-sdk/client-sqs');
  const { UpdateItemCommand } = await import('../lib/aws/jsonProtocol/dynamodb.ts');
  const { PutEventsCommand } = await import('../lib/aws/jsonProtocol/eventBridge.ts');
  const { eventBridgeClient } = await import('../lib/aws/clients.ts');
  const { handler: deliveryWorker } = await import('../functions/deliveryWorker.ts');
  const { pollOnce } = await import('../local/queuePoller.ts');
  const { dynamoClient } = await import('../lib/aws/clients.ts');
  const { getStatusRecord } = await import('../lib/store/statusRecords.ts');

  const queueUrl = process.env.SALES_REGISTRATION_QUEUE_URL as string;
  const table = process.env.RECORDS_TABLE as string;
  const sapUrl = process.env.ERP_BASE_URL as string;
  const sqs = new SQSClient({
    ...localClientConfig(process.env.AWS_ENDPOINT_URL_SQS as string),
    useQueueUrlAsEndpoint: false,
  });
  const counts: Counts = {};
  sqs.middlewareStack.add(countingMiddleware(counts), counting);
  countJsonCalls(dynamoClient(), counts);
  countJsonCalls(eventBridgeClient(), counts);

  const { acceptedSalesSeeder } = await import('./acceptedSales.ts');
  /** Pre-accepted records: status `accepted` and a message each, as intake leaves them. */
  const seed = acceptedSalesSeeder(queueUrl, 'WB');

  const ours = async (n: number) => {
    let delivered = 0;
    let idle = 0;
    while (delivered < n) {
      const result = await pollOnce({ sqs, queueUrl, handler: deliveryWorker, batchSize: 10 });
      if (result.failed > 0) throw new Error(`worker reported ${result.failed} failures`);
      if (result.received === 0 && ++idle > 100) throw new Error(`queue empty after ${delivered}/${n}`);
      delivered += result.deleted;
    }
    return delivered;
  };

  // The bare loop's downstream session: one token fetch, as the ERP client keeps one per container.
  const authorization = `Basic ${Buffer.from(`${SAP_USER}:${SAP_PASSWORD}`).toString('base64')}`;
  const serviceRoot = new URL(SAP_SERVICE_PATH.slice(0, SAP_SERVICE_PATH.lastIndexOf('/') + 1), sapUrl);
  const entitySet = new URL(SAP_SERVICE_PATH, sapUrl);
  const tokenAnswer = await fetch(serviceRoot, {
    headers: { Authorization: authorization, 'X-CSRF-Token': 'Fetch', Accept: 'application/json' },
  });
  await tokenAnswer.arrayBuffer();
  const token = tokenAnswer.headers.get('x-csrf-token') as string;
  const cookie = tokenAnswer.headers
    .getSetCookie()
    .map((line) => line.split(';', 1)[0])
    .join('; ');

  const deliverBare = async (body: string) => {
    const message = JSON.parse(body) as { id: string };
    // The claim of lib/store/statusUpdates.ts before the downstream call (a conditional write with a lease), bare.
    const now = new Date();
    const lease = new Date(now.getTime() + 90_000).toISOString();
    // The record delivered is the one the claim returns (the message only names it), as the worker does.
    const claimed = await dynamoClient().send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: message.id } },
        UpdateExpression: 'SET leaseUntil = :lease, tries = if_not_exists(tries, :zero) + :one',
        ConditionExpression:
          '#status = :accepted AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':lease': { S: lease },
          ':now': { S: now.toISOString() },
          ':accepted': { S: 'accepted' },
          ':zero': { N: '0' },
          ':one': { N: '1' },
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const { record } = unmarshall(claimed.Attributes ?? {}) as { record: object };
    const answer = await fetch(entitySet, {
      method: 'POST',
      headers: {
        Authorization: authorization,
        'X-CSRF-Token': token,
        Cookie: cookie,
        'Content-Type': 'application/json',
        Accept: 'application/json',
      },
      body: JSON.stringify({ ...record, RegistrationId: message.id }),
    });
    const documentNumber = String(
      (JSON.parse(await answer.text()) as { d: { DocumentNumber: string } }).d.DocumentNumber,
    );
    // The outcome write of lib/store/statusUpdates.ts for a delivery, as one bare UpdateItem: the same attributes
    // (state, history step, the change in the outbox, the indexes' keys, retention times).
    const at = new Date().toISOString();
    const change = {
      state: 'delivered',
      previousState: 'accepted',
      attempts: 1,
      at,
      downstreamId: documentNumber,
    };
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: message.id } },
        UpdateExpression:
          'SET #status = :status, statusKey = :statusKey, attempts = if_not_exists(attempts, :zero) + :attempts, updatedAt = :at, downstreamId = :downstreamId, ' +
          '#history = list_append(if_not_exists(#history, :empty), :step), pendingEvents = list_append(if_not_exists(pendingEvents, :empty), :change), ' +
          'eventsKind = :kind, eventsDueAt = :at, purgeKind = :kind, purgeAt = :at, expiresAt = :expires ' +
          'REMOVE #error, leaseUntil, openKind, dueAt',
        ConditionExpression: 'attribute_exists(pk) AND #status = :accepted',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error', '#history': 'history' },
        ExpressionAttributeValues: {
          ':status': { S: 'delivered' },
          ':statusKey': { S: 'salesRegistration#delivered' },
          ':attempts': { N: '1' },
          ':zero': { N: '0' },
          ':at': { S: at },
          ':accepted': { S: 'accepted' },
          ':downstreamId': { S: documentNumber },
          ':empty': { L: [] },
          ':step': {
            L: [{ M: marshall({ at, status: 'delivered', reached: true, downstreamId: documentNumber }) }],
          },
          ':change': { L: [{ M: marshall(change) }] },
          ':kind': { S: 'salesRegistration' },
          ':expires': { N: String(Math.floor(Date.now() / 1000) + 400 * 86_400) },
        },
      }),
    );
    // The event, published; then the outbox emptied.
    await eventBridgeClient().send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: process.env.EVENT_BUS_NAME,
            Source: 'dealer-gateway',
            DetailType: 'Record state changed',
            Detail: JSON.stringify({ eventId: `${message.id}:${at}`, recordId: message.id, ...change }),
          },
        ],
      }),
    );
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: message.id } },
        UpdateExpression: 'REMOVE pendingEvents, eventsKind, eventsDueAt',
        ConditionExpression: 'size(pendingEvents) = :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
  };

  const bare = async (n: number) => {
    let delivered = 0;
    let idle = 0;
    while (delivered < n) {
      const received = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageSystemAttributeNames: ['All'],
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) {
        if (++idle > 100) throw new Error(`queue empty after ${delivered}/${n}`);
        continue;
      }
      await Promise.all(messages.map((m) => deliverBare(m.Body ?? '')));
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
      delivered += messages.length;
    }
    return delivered;
  };

  const sides = { ours, bare };
  type Side = keyof typeof sides;
  const profiler = await cpuProfiler();
  const empty = () => ({ delivered: 0, ms: 0, cpuUs: 0, calls: {} as Counts, posts: 0, tokens: 0 });
  const totals = { ours: empty(), bare: empty() };
  const block = async (side: Side, n: number, measured: boolean) => {
    const ids = await seed(n);
    const callsBefore = { ...counts };
    const sapBefore = await readSapCounts(sapUrl);
    // Each block starts from a collected heap, so it pays for its own garbage, not for the previous block's.
    (globalThis as { gc?: () => void }).gc?.();
    const profiling = measured && profiler?.side === side;
    if (profiling) await profiler?.start();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const delivered = await sides[side](n);
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (profiling) await profiler?.pause();
    const callsAfter = { ...counts };
    const sapAfter = await readSapCounts(sapUrl);
    // Every record of the block really is delivered (checked outside the timing).
    for (const id of [ids[0], ids[ids.length - 1]]) {
      const status = await getStatusRecord(id);
      if (status?.status !== 'delivered') throw new Error(`${side}: record ${id} is ${status?.status}`);
      if (status.pendingEvents) throw new Error(`${side}: record ${id}: its event was not published`);
    }
    if (!measured) return;
    const total = totals[side];
    total.delivered += delivered;
    total.ms += ms;
    total.cpuUs += used.user + used.system;
    total.posts += sapAfter.posts - sapBefore.posts;
    total.tokens += sapAfter.tokenFetches - sapBefore.tokenFetches;
    for (const [name, value] of Object.entries(callsAfter)) {
      total.calls[name] = (total.calls[name] ?? 0) + value - (callsBefore[name] ?? 0);
    }
  };

  const records = Number(process.env.BENCH_WORKER_RECORDS ?? 500);
  const rounds = 4;
  const measuredSides: Side[] = ['ours', 'bare'];
  for (const side of measuredSides) await block(side, 50, false);
  for (let round = 0; round < rounds; round++) {
    // Alternate the order, so that neither side always runs first (after the other's garbage).
    const order = round % 2 === 0 ? measuredSides : [...measuredSides].reverse();
    for (const side of order) await block(side, records / rounds, true);
  }
  const summary = (side: Side): WorkerSide => {
    const total = totals[side];
    return {
      delivered: total.delivered,
      perSecond: total.delivered / (total.ms / 1000),
      cpuUsPerDelivery: total.cpuUs / total.delivered,
      callsPerDelivery: Object.fromEntries(
        Object.entries(total.calls)
          .filter(([, value]) => value > 0)
          .map(([name, value]) => [name, value / total.delivered]),
      ),
      sapPostsPerDelivery: total.posts / total.delivered,
      sapTokenFetches: total.tokens,
    };
  };
  await profiler?.save();
  sqs.destroy();
  return { records, ours: summary('ours'), bare: summary('bare') };
};

/** Starts fauxqs + dynalite and the instant SAP in their own processes, then the worker in another. */
export const measureWorkerThroughput = async (records = 500): Promise<WorkerResult> => {
  const [aws, sap] = await Promise.all([startLocalAws(), startInstantSap()]);
  // The bus both sides publish to, outside the measured process (no webhooks: events are taken and dropped).
  const bus = await startLocalEventBus({
    busNames: [BENCH_BUS],
  });
  try {
    return await runNodeJson<WorkerResult>(['--expose-gc', `${benchDir}/workerThroughput.ts`, '--child'], {
      ...awsFreeEnv(),
      ...quietPowertools,
      ...aws.info.env,
      AWS_ENDPOINT_URL_SQS: aws.info.sqs,
      AWS_ENDPOINT_URL_DYNAMODB: aws.info.dynamodb,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      ERP_BASE_URL: sap.info.url,
      ERP_SERVICE_PATH: SAP_SERVICE_PATH,
      ERP_USERNAME: SAP_USER,
      ERP_PASSWORD: SAP_PASSWORD,
      BENCH_WORKER_RECORDS: String(records),
      AWS_ENDPOINT_URL_EVENTBRIDGE: bus.url,
      EVENT_BUS_NAME: BENCH_BUS,
    });
  } finally {
    await Promise.all([aws.stop(), sap.stop(), bus.stop()]);
  }
};

if (import.meta.main) {
  if (process.argv[2] === '--child') process.stdout.write(`${JSON.stringify(await child())}\n`);
  else console.log(JSON.stringify(await measureWorkerThroughput(Number(process.argv[2] ?? 500)), null, 1));
}
