import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';

/** Where a record stands. See the README for the state diagram. */
export type RecordStatus = 'accepted' | 'delivered' | 'rejected' | 'failed';

/** The status record of one accepted record, as stored. */
export interface StatusRecord {
  id: string;
  kind: RecordKind;
  status: RecordStatus;
  /** Delivery requests that reached the downstream system. */
  attempts: number;
  acceptedAt: string;
  updatedAt: string;
  /** The caller it belongs to (a client name); only that caller can look it up. */
  owner: string;
  /** Request id of the intake request that accepted it, carried to the worker for tracing. */
  requestId: string;
  /** The normalised record: kept so that a record can be queued again (restart, redrive) without its caller. */
  record: SalesRegistration | CaseRecord;
  downstreamId?: string;
  error?: string;
  /**
   * Set on the first record of a content when the same content was accepted again after the duplicate window:
   * the id and time of that later record, so duplicate detection compares against the newest one.
   */
  latestId?: string;
  latestAcceptedAt?: string;
}

/** An `Idempotency-Key` seen in the last 24 hours, with a hash of the body it came with. */
export interface IdempotencyEntry {
  kind: RecordKind;
  keyHash: string;
  bodyHash: string;
  /** Epoch seconds; DynamoDB's TTL removes the entry after it. */
  expiresAt: number;
}
