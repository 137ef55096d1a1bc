/**
 * Fair share between clients locally (docs/behaviour.md#batching): the local queue is a fair queue, as a standard queue is on AWS for
 * messages that carry a MessageGroupId (local/emulators/fauxqs/fairQueue.ts). Against it, the real worker through the local poller,
 * and the Salesforce sandbox: one client's flood queued first by the producers' own function, then one record of
 * another client; the quiet client's record goes out in the first batch, not after the flood's last, and nothing is
 * lost or doubled. The control: the same messages naming no client are served first in, first out.
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

/**
 * Accepted cases of `owner`, stored and queued by the producers' own functions (as intake leaves them); with
 * `named` false, the messages name no client (as written before fair queueing).
 */
const queueCases = async (
  queueUrl: string,
  owner: string,
  count: number,
  named = true,
): Promise<StatusRecord[]> => {
  const validated = validateCaseRecord(caseInput());
  if (!validated.ok) throw new Error('case factory invalid');
  const statuses = Array.from({ length: count }, () => acceptedCase({ owner, record: validated.value }));
  await seedStatusRecords(statuses);
  const messages = statuses
    .map(queuedRecordOf)
    .map(({ owner: client, ...message }) => (named ? { ...message, owner: client } : message));
  const failed = await sendRecords(queueUrl, messages);
  if (failed.length > 0) throw new Error(`${failed.length} not queued`);
  return statuses;
};

/**
 * Runs the local poller with the worker until the quiet record is settled, then stops it. Answers each invocation's
 * record ids in order and the ids the queue holds afterwards.
 */
const runUntilSettled = async (queueUrl: string, quietId: string) => {
  const invocations: string[][] = [];
  const handler = async (event: SQSEvent, context: Parameters<typeof deliveryWorker>[1]) => {
    invocations.push(event.Records.map((r) => JSON.parse(r.body).id));
    return deliveryWorker(event, context);
  };
  const poller = startPoller({
    sqs,
    queueUrl,
    handler,
    batchSize: BATCH_SIZE,
    batchingWindowSeconds: 1,
    waitSeconds: 0,
  });
  while ((await getStatusRecord(quietId))?.status !== 'delivered')
    await new Promise((resolve) => setTimeout(resolve, 50));
  await poller.stop();
  const left = (await aws.drain(queueUrl)).map((m) => m.id);
  return { invocations, left };
};

describe('a flood from one client and one record from another, through the local poller', () => {
  it.each([
    { named: true, mode: 'the messages naming their client', batch: 'first' },
    { named: false, mode: 'the messages naming none (the control)', batch: 'last' },
  ])(
    "delivers the quiet client's record in the $batch batch, losing and doubling nothing ($mode)",
    async ({ named }) => {
      // Prepare: client A's flood queued first, then client B's one record.
      const queueUrl = aws.resources.queues.CaseQueue.url;
      const flood = await queueCases(queueUrl, 'client-a', FLOOD, named);
      const [quiet] = await queueCases(queueUrl, 'client-b', 1, named);
      // Act
      const { invocations, left } = await runUntilSettled(queueUrl, quiet.id);
      // Assess: named, B rode in the first batch, served as soon as A held 30 in flight (the 31st message received);
      // naming none, after A's whole flood.
      const quietAt = invocations.findIndex((ids) => ids.includes(quiet.id));
      if (named) {
        expect(quietAt).toBe(0);
        expect(invocations[0].indexOf(quiet.id)).toBe(30);
      } else expect(quietAt).toBe(Math.ceil((FLOOD + 1) / BATCH_SIZE) - 1);
      // Every message was handed out once or is still on the queue, never both.
      const handed = invocations.flat();
      const all = [...handed, ...left];
      expect(new Set(handed).size).toBe(handed.length);
      expect(all.length).toBe(FLOOD + 1);
      expect(new Set(all)).toEqual(new Set([...flood.map((s) => s.id), quiet.id]));
    },
    120_000,
  );
});
