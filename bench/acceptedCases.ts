/**
 * Pre-accepted cases for the batching and outage benchmarks, as bench/acceptedSales.ts makes sales: status records
 * `accepted` and a message each, written with the service's own functions, as intake leaves them. Loaded by the
 * benchmarks' child processes only.
 */
import { randomUUID } from 'node:crypto';
import { queuedRecordOf } from '../lib/queue/queuedRecord.ts';
import { sendRecords } from '../lib/queue/sendRecords.ts';
import type { StatusRecord } from '../lib/records/types.ts';
import { validateCaseRecord } from '../lib/validation/caseRecord.ts';
import { caseInput } from '../testkit/factories/records.ts';
import { seedStatusRecords } from '../testkit/seedStatus.ts';

/**
 * Accepted status records of `n` new cases (distinct comments), not yet stored.
 *
 * @example
 * const statuses = acceptedCaseStatuses(10, 'run1');
 */
export const acceptedCaseStatuses = (n: number, tag: string, owner = 'example-web-forms'): StatusRecord[] => {
  const at = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => {
    const validated = validateCaseRecord(caseInput({ comments: `Benchmark case ${tag} ${i}` }));
    if (!validated.ok) throw new Error(`seed case invalid: ${JSON.stringify(validated.problems)}`);
    return {
      id: randomUUID().replaceAll('-', ''),
      kind: 'caseRecord' as const,
      status: 'accepted' as const,
      attempts: 0,
      acceptedAt: at,
      updatedAt: at,
      owner,
      requestId: randomUUID(),
      record: validated.value,
      openKind: 'caseRecord' as const,
      dueAt: at,
    } as StatusRecord;
  });
};

/**
 * A seeder of accepted cases on a queue: each call writes `n` new ones of `owner` (the client, the messages'
 * group) and answers their ids.
 *
 * @example
 * const seed = acceptedCaseSeeder(queueUrl);
 * const ids = await seed(1000);
 */
export const acceptedCaseSeeder = (queueUrl: string, owner = 'example-web-forms') => {
  let calls = 0;
  const run = Date.now().toString(36);
  return async (n: number): Promise<string[]> => {
    const statuses = acceptedCaseStatuses(n, `${run}-${calls++}`, owner);
    await seedStatusRecords(statuses);
    const failed = await sendRecords(queueUrl, statuses.map(queuedRecordOf));
    if (failed.length > 0) throw new Error(`seeding: ${failed.length} messages not queued`);
    return statuses.map((s) => s.id);
  };
};
