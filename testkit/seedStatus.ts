import type { StatusRecord } from '../lib/records/types.ts';
import { toItem } from '../lib/store/statusRecords.ts';
import { batchPutItems } from '../lib/store/table.ts';

/**
 * Writes status records as they are, for a test's (or a benchmark's) starting point: a record accepted long
 * ago, a failed one, one a crashed request left behind.
 *
 * @example
 * await seedStatusRecords([{ ...status, status: 'failed' }]);
 */
export const seedStatusRecords = (records: StatusRecord[]): Promise<void> =>
  batchPutItems(records.map(toItem));
