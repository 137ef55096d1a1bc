import type { RecordStatus } from '../records/types.ts';
import type { RecordKind } from '../types.ts';

/**
 * The detail of a `Record state changed` event: published on every change of a record's state to `delivered`,
 * `rejected` or `failed`, and back to `accepted` by redrive. No personal data: ids, the owning client, the state,
 * the attempts, the downstream's id or its (redacted) error, and for sales what a dealer's system knows the sale by.
 */
export interface RecordStateChanged {
  /** `<recordId>:<at>`: the same on every copy of this change (a receiver drops the copies it has seen). */
  eventId: string;
  recordId: string;
  kind: RecordKind;
  /** The client the record belongs to (its owner), as named in config/clients.json. */
  client: string;
  state: RecordStatus;
  previousState: RecordStatus;
  /** Delivery requests that reached the downstream system so far. */
  attempts: number;
  /** 1, 2, ... per record, in the order of its changes: the highest a receiver has seen is the record's latest state. */
  sequence: number;
  /** When the state changed (ISO 8601). */
  at: string;
  /** When the record was accepted (ISO 8601). */
  acceptedAt: string;
  downstreamId?: string;
  /** The downstream's refusal or the last failure, with personal data removed. */
  error?: string;
  /** Sales only: the frame number and dealer of the sale. */
  FrameNum?: string;
  DealerId?: number;
  /** A test client's record (docs/API.md, "Test mode"); absent on a live one, so live events keep their shape. */
  test?: true;
  /**
   * The record's trace context (its status record's `traceparent`, contract section 8): the event's spans and each
   * webhook post of it join the record's trace through it. Never in a webhook body or a feed entry.
   */
  traceparent?: string;
}
