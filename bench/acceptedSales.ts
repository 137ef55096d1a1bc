/**
 * Pre-accepted sales for the worker benchmarks (bench/workerThroughput.ts, bench/capacity.ts): status records
 * `accepted` and a message each, written with the service's own functions, as intake leaves them. Loaded by the
 * benchmarks' child processes only.
 */
import { randomUUID } from 'node:crypto';
import { queuedRecordOf } from '../lib/queue/queuedRecord.ts';
import { sendRecords } from '../lib/queue/sendRecords.ts';
import { validateSalesRegistrations } from '../lib/validation/salesRegistration.ts';
import { salesRegistrationInput } from '../testkit/factories/records.ts';
import { seedStatusRecords } from '../testkit/seedStatus.ts';

/**
 * A seeder of accepted sales on a queue: each call writes `n` new ones (frame numbers `<prefix><run tag><serial>`,
 * unique across calls) of `owner` (the client, the messages' group) and answers their ids. With `grouped` false,
 * the messages name no client (as they were written before fair queueing): the queue serves them first in, first
 * out.
 *
 * @example
 * const seed = acceptedSalesSeeder(queueUrl, 'WB');
 * const ids = await seed(500);
 */
export const acceptedSalesSeeder = (
  queueUrl: string,
  prefix: string,
  owner = 'example-dealer',
  grouped = true,
) => {
  let serial = 0;
  const tag = Date.now().toString(36).toUpperCase();
  return async (n: number): Promise<string[]> => {
    const input = Array.from({ length: n }, () =>
      salesRegistrationInput({
        FrameNum: `${prefix}${tag}${(serial++).toString(36).toUpperCase().padStart(6, '0')}`,
      }),
    );
    const validated = validateSalesRegistrations(input);
    if (!validated.ok) throw new Error(`seed records invalid: ${JSON.stringify(validated.problems)}`);
    const at = new Date().toISOString();
    const statuses = validated.value.map((record) => ({
      id: randomUUID().replaceAll('-', ''),
      kind: 'salesRegistration' as const,
      status: 'accepted' as const,
      attempts: 0,
      acceptedAt: at,
      updatedAt: at,
      owner,
      requestId: randomUUID(),
      record,
      openKind: 'salesRegistration' as const,
      dueAt: at,
    }));
    await seedStatusRecords(statuses);
    const messages = statuses
      .map(queuedRecordOf)
      .map(({ owner: client, ...message }) => (grouped ? { ...message, owner: client } : message));
    const failed = await sendRecords(queueUrl, messages);
    if (failed.length > 0) throw new Error(`seeding: ${failed.length} messages not queued`);
    return statuses.map((s) => s.id);
  };
};
