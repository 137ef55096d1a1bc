/**
 * Fair share between clients locally (issue 21): fauxqs serves a standard queue first in, first out, so the local
 * poller stands in for SQS fair queues. Against real fauxqs, the real worker and the Salesforce sandbox: one client's
 * flood queued first, then one record of another client; the quiet client's record goes out among the first batches,
 * not after the flood's last, and the look-ahead neither loses nor doubles a message.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as deliveryWorker } from '../../functions/deliveryWorker.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { queuedRecordOf } from '../../lib/queue/queuedRecord.ts';
import { sendRecords } from '../../lib/queue/sendRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { validateCaseRecord } from '../../lib/validation/caseRecord.ts';
import { localClientConfig } from '../../local/aws.ts';
import { startPoller } from '../../local/queuePoller.ts';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { caseInput } from '../../testkit/factories/records.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

/** The flooding client's records, queued before the quiet client's one. */
const FLOOD = 2000;
const BATCH_SIZE = 200;

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let salesforce: SalesforceSandbox;
let sqs: SQSClient;

beforeAll(async () => {
  aws = await isolatedAws();
  salesforce = await startSalesforceSandbox();
  Object.assign(process.env, {
    CRM_BASE_URL: salesforce.url,
    CRM_CLIENT_ID: salesforce.clientId,
    CRM_CLIENT_SECRET: salesforce.clientSecret,
  });
  resetDownstreamClients();
  sqs = new SQSClient({ ...localClientConfig(aws.sqsEndpoint), useQueueUrlAsEndpoint: false });
});

afterAll(async () => {
  sqs.destroy();
  await salesforce.stop();
});

/** Accepted cases of `owner`, stored and queued by the producers' own functions (as intake leaves them). */
const queueCases = async (queueUrl: string, owner: string, count: number): Promise<StatusRecord[]> => {
  const validated = validateCaseRecord(caseInput());
  if (!validated.ok) throw new Error('case factory invalid');
  const statuses = Array.from({ length: count }, () => acceptedCase({ owner, record: validated.value }));
  await seedStatusRecords(statuses);
  const failed = await sendRecords(queueUrl, statuses.map(queuedRecordOf));
  if (failed.length > 0) throw new Error(`${failed.length} not queued`);
  return statuses;
};

/**
 * Runs the local poller with the worker until the quiet record is settled, then stops it. The first batch waits
 * until the poller has looked ahead over the whole queue (`ready`), as it has whenever a flood is queued while a
 * batch is being delivered. Answers each invocation's record ids in order and the ids the queue holds afterwards.
 */
const runUntilSettled = async (queueUrl: string, quietId: string, fair: boolean, queued: number) => {
  const invocations: string[][] = [];
  const handler = async (event: SQSEvent, context: Parameters<typeof deliveryWorker>[1]) => {
    invocations.push(event.Records.map((r) => JSON.parse(r.body).id));
    return deliveryWorker(event, context);
  };
  let held = () => 0;
  const ready = () => !fair || invocations.length > 0 || held() >= queued;
  const poller = startPoller({
    sqs,
    queueUrl,
    handler,
    batchSize: BATCH_SIZE,
    batchingWindowSeconds: 1,
    waitSeconds: 0,
    gate: async () => (ready() ? 0 : 50),
    fair,
  });
  held = poller.held;
  while ((await getStatusRecord(quietId))?.status !== 'delivered')
    await new Promise((resolve) => setTimeout(resolve, 50));
  await poller.stop();
  const left = (await aws.drain(queueUrl)).map((m) => m.id);
  return { invocations, left };
};

describe('a flood from one client and one record from another, through the local poller', () => {
  it("delivers the quiet client's record in the first batches, losing and doubling nothing", async () => {
    // Prepare: client A's flood queued first, then client B's one record.
    const queueUrl = aws.resources.queues.CaseQueue.url;
    const flood = await queueCases(queueUrl, 'client-a', FLOOD);
    const [quiet] = await queueCases(queueUrl, 'client-b', 1);
    // Act
    const { invocations, left } = await runUntilSettled(queueUrl, quiet.id, true, FLOOD + 1);
    // Assess: B rode in the first batch, second in it (one of each client in turn), not after A's last.
    expect(invocations[0]?.slice(0, 2)).toEqual([flood[0].id, quiet.id]);
    // Every message was handed out once or is back on the queue (the look-ahead handed back on stop), never both.
    const handed = invocations.flat();
    const all = [...handed, ...left];
    expect(new Set(handed).size).toBe(handed.length);
    expect(all.length).toBe(FLOOD + 1);
    expect(new Set(all)).toEqual(new Set([...flood.map((s) => s.id), quiet.id]));
  }, 120_000);
});
