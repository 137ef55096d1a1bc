import { randomBytes } from 'node:crypto';
import type { StatusRecord } from '../../lib/records/types.ts';
import { caseInput } from './records.ts';

/**
 * A case status record as a request left it at 08:00 (`accepted`, in the `open` index, due at 08:05), with a fresh
 * id and the `statusKey` of its status; `changes` make it something else.
 *
 * @example
 * await seedStatusRecords([acceptedCase({ status: 'failed', openKind: undefined, dueAt: undefined })]);
 */
export const acceptedCase = (changes: Partial<StatusRecord> = {}): StatusRecord => ({
  id: randomBytes(16).toString('hex'),
  statusKey: `caseRecord#${changes.status ?? 'accepted'}`,
  kind: 'caseRecord',
  status: 'accepted',
  attempts: 0,
  acceptedAt: '2026-11-22T08:00:00.000Z',
  updatedAt: '2026-11-22T08:00:00.000Z',
  requestId: 'r',
  owner: 'example-web-forms',
  record: caseInput() as unknown as StatusRecord['record'],
  openKind: 'caseRecord',
  dueAt: '2026-11-22T08:05:00.000Z',
  ...changes,
});
