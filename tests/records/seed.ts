import { randomBytes } from 'node:crypto';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import type { RecordStatus, StatusRecord } from '../../lib/records/types.ts';
import { putStatusRecordIfAbsent } from '../../lib/store/statusRecords.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord, SalesRegistration } from '../../lib/types.ts';
import { caseInput, salesRegistrationInput } from '../../testkit/factories/records.ts';

/** How a seeded record was accepted: by whom, when, and for sales its dealer and frame number. */
export interface Acceptance {
  owner?: string;
  at?: string;
  dealer?: number;
  frame?: string;
  /** A test client's record (marked `test`, as intake marks them): `owner` defaults to example-dealer-test. */
  test?: boolean;
}

/**
 * Accepts a record as intake does (lib/intake newStatusRecord, written by putStatusRecordIfAbsent): `accepted`, with
 * its statusKey, and for a sale its frameKey and dealer.
 *
 * @example
 * const sale = await acceptRecord('salesRegistration', { owner: 'example-dealer', frame: 'F1', at: '2026-11-22T08:00:00.000Z' });
 */
export const acceptRecord = async (
  kind: 'salesRegistration' | 'caseRecord',
  acceptance: Acceptance = {},
): Promise<StatusRecord> => {
  const record =
    kind === 'salesRegistration'
      ? salesRegistrationInput({
          DealerId: acceptance.dealer ?? 1234,
          FrameNum: acceptance.frame ?? 'JH2PC40A1XM000001',
        })
      : caseInput();
  const status = newStatusRecord(
    randomBytes(16).toString('hex'),
    {
      kind,
      records: [],
      requestId: 'r',
      owner:
        acceptance.owner ??
        (acceptance.test
          ? 'example-dealer-test'
          : kind === 'salesRegistration'
            ? 'example-dealer'
            : 'example-web-forms'),
      ...(acceptance.test ? { test: true } : {}),
    },
    record as unknown as SalesRegistration | CaseRecord,
    new Date(acceptance.at ?? '2026-11-22T08:00:00.000Z'),
  );
  if (!(await putStatusRecordIfAbsent(status))) throw new Error('seed: id taken');
  return status;
};

/** One delivery attempt's outcome, as the worker records it. */
export interface Attempt {
  status: RecordStatus;
  reached?: boolean;
  downstreamId?: string;
  error?: string;
  at: string;
}

/**
 * Runs attempts on a record as the worker does: a claim (claimRecord), then the outcome (recordAttempt), each
 * appended to its history.
 *
 * @returns the record as the last write left it.
 * @example
 * await attempt(sale, { status: 'rejected', error: 'frame number registered twice', at: '2026-11-22T08:01:00.000Z' });
 */
export const attempt = async (record: StatusRecord, ...attempts: Attempt[]): Promise<StatusRecord> => {
  let current = record;
  for (const step of attempts) {
    const at = new Date(step.at);
    const leaseUntil = new Date(at.getTime() + 60_000).toISOString();
    const claim = await claimRecord(current.id, { now: at, leaseUntil });
    if (!claim.claimed) throw new Error(`seed: ${current.id} could not be claimed`);
    const written = await recordAttempt(
      claim.claimed,
      {
        status: step.status,
        attempts: step.reached === false ? 0 : 1,
        at,
        ...(step.downstreamId ? { downstreamId: step.downstreamId } : {}),
        ...(step.error ? { error: step.error } : {}),
        ...(step.status === 'accepted' ? { dueAt: new Date(at.getTime() + 120_000).toISOString() } : {}),
      },
      leaseUntil,
    );
    if (!written) throw new Error(`seed: ${current.id}: the attempt was not recorded`);
    current = written;
  }
  return current;
};
