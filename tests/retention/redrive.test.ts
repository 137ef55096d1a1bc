/**
 * Redrive after retention: a failed record whose personal fields are gone cannot be delivered, so redrive leaves it
 * `failed` and says how many it left; a failed record that still has them is redriven as before.
 */
import { randomBytes } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { redriveByHand } from '../../lib/redrive/redrive.ts';
import { purgePersonalData } from '../../lib/retention/purge.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { caseInput } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

let aws: Awaited<ReturnType<typeof freshAws>>;

beforeEach(async () => {
  aws = await freshAws();
});

/** A case accepted a minute before `at` and failed at `at` through the worker's writes. */
const failedAt = async (at: Date): Promise<StatusRecord> => {
  const record = caseInput() as unknown as CaseRecord;
  const status = newStatusRecord(
    randomBytes(16).toString('hex'),
    { kind: 'caseRecord', records: [record], requestId: 'retention', owner: 'example-web-forms' },
    record,
    new Date(at.getTime() - 60_000),
  );
  await seedStatusRecords([status]);
  const leaseUntil = new Date(at.getTime() + 90_000).toISOString();
  const claim = await claimRecord(status.id, { now: at, leaseUntil });
  if (!claim.claimed) throw new Error('not claimed');
  const written = await recordAttempt(
    claim.claimed,
    { status: 'failed', attempts: 1, at, error: 'HTTP 503' },
    leaseUntil,
  );
  if (!written) throw new Error('not written');
  return written;
};

describe('redrive of failed records after retention', () => {
  it('leaves a failed record whose personal data is gone failed, and counts it; redrives the one that still has it', async () => {
    // Prepare: one failed 61 days ago (purged), one failed yesterday.
    const now = Date.now();
    const old = await failedAt(new Date(now - 61 * 86_400_000));
    const recent = await failedAt(new Date(now - 86_400_000));
    const purge = await purgePersonalData({ now: new Date(now) });
    const sqs = new SQSClient({ ...localClientConfig(aws.sqsEndpoint), useQueueUrlAsEndpoint: false });
    // Act
    const result = await redriveByHand({
      sqs,
      kind: 'caseRecord',
      queueUrl: aws.resources.queues.CaseQueue.url,
      deadLetterQueueUrl: aws.resources.queues.CaseDeadLetterQueue.url,
    });
    sqs.destroy();
    // Assess
    expect(purge.purged.caseRecord).toBe(1);
    expect(result).toEqual({ moved: 0, requeued: 1, personalDataRemoved: 1 });
    expect(await getStatusRecord(old.id)).toMatchObject({ status: 'failed' });
    expect(await getStatusRecord(recent.id)).toMatchObject({ status: 'accepted' });
    const queued = await aws.drain(aws.resources.queues.CaseQueue.url);
    expect(queued.map((message) => message.id)).toEqual([recent.id]);
  });
});
