import type { RecordStatus } from '../../records/types.ts';
import { recordsByStatus } from '../../store/statusIndex.ts';
import { DOWNSTREAM_OF_KIND, type Downstream, RECORD_KINDS } from '../../types.ts';
import { type ActivityHour, type ActivitySource, emptyHours, lastDayHours } from './hours.ts';

/** Index entries read at most for one answer: npm start's store, not a production table. */
const MAX_ENTRIES = 200_000;

/**
 * The hours counted from the records table (npm start has no CloudWatch): every record accepted in the last 24
 * hours, read through the `status` index from the first hour on (never a scan), counts as accepted in the hour of
 * its `acceptedAt`, and, when delivered or failed, as that in the hour of its `updatedAt`. A record accepted before
 * the 24 hours and settled within them is not counted (the metrics on AWS count it).
 */
export const storeActivity: ActivitySource = {
  async hours(now) {
    const hours = emptyHours(now);
    const first = lastDayHours(now)[0];
    const slot = (downstream: Downstream, at: string): ActivityHour | undefined => {
      const index = Math.floor((Date.parse(at) - first) / 3_600_000);
      return index >= 0 && index < 24 ? hours[(downstream === 'erp' ? 0 : 24) + index] : undefined;
    };
    let read = 0;
    const statuses: RecordStatus[] = ['accepted', 'delivered', 'rejected', 'failed'];
    await Promise.all(
      RECORD_KINDS.flatMap((kind) =>
        statuses.map(async (status) => {
          const from = new Date(first).toISOString();
          for await (const page of recordsByStatus(kind, status, { acceptedFrom: from, pageSize: 1_000 })) {
            for (const entry of page) {
              const downstream = DOWNSTREAM_OF_KIND[entry.kind];
              const accepted = slot(downstream, entry.acceptedAt);
              if (accepted) accepted.accepted++;
              if (status === 'delivered' || status === 'failed') {
                const settled = slot(downstream, entry.updatedAt);
                if (settled) settled[status]++;
              }
            }
            read += page.length;
            if (read >= MAX_ENTRIES) return;
          }
        }),
      ),
    );
    return hours;
  },
};
