import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';

/** Where a record stands. See the README for the state diagram. */
export type RecordStatus = 'accepted' | 'delivered' | 'rejected' | 'failed';

/** One step of a record's history: an attempt's outcome, or a redrive. */
export interface HistoryEntry {
  at: string;
  /** The state the record was in after this step. */
  status: RecordStatus;
  /** Whether the delivery request reached the downstream system (counted in `attempts`). */
  reached: boolean;
  downstreamId?: string;
  /** The downstream's refusal or the failure, with personal data removed. */
  error?: string;
  /** Present on the step that put a `failed` record back to `accepted`. */
  redriven?: true;
}

/**
 * A change of state as it waits in a record's outbox (`pendingEvents`): only what the record itself does not say
 * (its id, kind, owner, acceptance time, frame number and dealer are read from the record when the event is
 * published, lib/events/stateChange.ts eventOf). Kept small, so that the outcome's write and the outbox's emptying
 * stay within one write unit.
 */
export interface PendingEvent {
  state: RecordStatus;
  previousState: RecordStatus;
  /** Delivery requests that reached the downstream system so far. */
  attempts: number;
  /**
   * 1, 2, ... per record, in the order of its changes. Absent only in an outbox written before sequences were
   * numbered (published as 0: older than any numbered one).
   */
  sequence?: number;
  /** When the state changed (ISO 8601). */
  at: string;
  downstreamId?: string;
  /** The downstream's refusal or the last failure, with personal data removed. */
  error?: string;
}

/** The status record of one accepted record, as stored. */
export interface StatusRecord {
  id: string;
  kind: RecordKind;
  status: RecordStatus;
  /** Delivery requests that reached the downstream system. */
  attempts: number;
  /**
   * Claims for delivery since acceptance or the last redrive, whether the request reached the downstream or not
   * (absent: none yet). The worker decides `failed` from it (DELIVERY_MAX_ATTEMPTS), never from SQS's receive
   * count: a copy bounced by another worker's lease or queued again by the reconciler claims nothing.
   */
  tries?: number;
  /**
   * Tries given back because the failure was not the record's own: a call that failed as a whole for several records,
   * or one that never reached the downstream (its token or CSRF fetch failed), counted since acceptance, the last
   * redrive or its downstream's last hold closed, whichever is latest. At DELIVERY_MAX_ATTEMPTS the record goes to
   * the downstream in a call of its own, so whatever fails then is its own (absent: none).
   */
  callFailures?: number;
  /** When `callFailures` last grew (ISO): a count from before the downstream's last hold closed restarts. */
  callFailedAt?: string;
  /**
   * The chance that a record with no fault of its own fails alone as often as this one has: the product of its
   * downstream's recent failure rate at each failure of a call that carried it alone, since acceptance or the last
   * redrive (absent: 1). While it stays above a bound such a failure spends no try (lib/outage/rules.ts, loneFailure).
   */
  loneFailureChance?: number;
  acceptedAt: string;
  updatedAt: string;
  /** The caller it belongs to (a client name); only that caller can look it up. */
  owner: string;
  /**
   * A test client's record (docs/API.md, "Test mode"): answered by the built-in simulators, never by SAP or
   * Salesforce; marked `"test": true` in its look-up, events, webhook posts and feed entries. Absent on a live one.
   */
  test?: true;
  /** Request id of the intake request that accepted it, carried to the worker for tracing. */
  requestId: string;
  /**
   * The W3C `traceparent` of the intake span that accepted it (contract section 8): every later hop (the queue,
   * each delivery attempt, the outcome, the event, each webhook post) is a span of this trace, whoever queues the
   * record (intake, the reconciler, a redrive). Absent on records accepted before tracing.
   */
  traceparent?: string;
  /** The normalised record: kept so that a record can be queued again (restart, redrive) without its caller. */
  record: SalesRegistration | CaseRecord;
  downstreamId?: string;
  error?: string;
  /**
   * On the first record of a content: the newest generation place of the same content taken since (accepted again
   * after the duplicate window, or under an `Idempotency-Key`; see `generationId`). A hint only: the places
   * themselves are taken conditionally.
   */
  latestGeneration?: number;
  /**
   * Present while the record is `accepted`: the partition key of the sparse `open` index, through which the
   * reconciler and the local runner find records to queue without a table scan. Its kind, or `<kind>#test` for a
   * test record (lib/records/keys.ts `openKindOf`; a test record written before that carries its kind).
   */
  openKind?: string;
  /**
   * While `accepted`: when the reconciler queues the record again if nobody has touched it by then (ISO time; the
   * sort key of the `open` index). Intake sets it a few minutes after acceptance, a worker pushes it past its
   * lease and the next retry, the reconciler past its own re-queue.
   */
  dueAt?: string;
  /**
   * On sales records only: `<owner>#<FrameNum>`, the partition key of the sparse `frame` index (sort key
   * `acceptedAt`), through which a caller looks up its records by frame number without a table scan.
   */
  frameKey?: string;
  /**
   * While `accepted`: how often the reconciler has queued it again since a worker last tried it (absent: never).
   * Each re-queue doubles the wait for the next (lib/reconcile/requeueDelay.ts requeueDelaySeconds).
   */
  requeues?: number;
  /** While `accepted`: when the reconciler last queued it again (ISO time; absent: never). */
  requeuedAt?: string;
  /**
   * Set by an intake request that stored the record but could not queue it (SQS failed, its deadline ran out): the
   * client's retry of the request queues it again at once (lib/intake/unqueued.ts), not the reconciler minutes
   * later. Absent on a record queued as it was stored.
   */
  unqueued?: true;
  /**
   * When the intake request that stored it ended at the latest (ISO; its invocation's timeout): past it, a record
   * nobody has moved may never have been queued (its request died before it could mark it `unqueued`), and the
   * client's retry queues it (lib/intake/unqueued.ts). Absent on records stored before it was written.
   */
  answerBy?: string;
  /** While a worker delivers the record: until when its claim holds (ISO time). Others wait or drop their copy. */
  leaseUntil?: string;
  /** `<kind>#<status>`, kept in step with `status`: the partition key of the `status` index (sort key `acceptedAt`). */
  statusKey?: string;
  /** Sales only: the DealerId, at the top so that operations can filter the `status` index by dealer. */
  dealer?: number;
  /** Every attempt's outcome and every redrive, oldest first. */
  history?: HistoryEntry[];
  /**
   * The console's timeline of the delivery side (lib/records/story.ts: attempts with their answer and duration, hold
   * waits, redrives and who), each entry a short string, the newest STORY_LIMIT; written in the attempt's own write.
   */
  story?: string[];
  /** Each webhook attempt for the record's events (lib/records/story.ts), the newest WEBHOOK_STORY_LIMIT. */
  webhookStory?: string[];
  /**
   * The event outbox: changes of state not yet published, written in the same write as the change itself. With
   * `eventsKind` and `eventsDueAt` (the sparse `events` index) while any are pending: the worker publishes them
   * at once, the reconciler whatever is still there at `eventsDueAt`.
   */
  pendingEvents?: PendingEvent[];
  /**
   * The `sequence` of the record's latest change of state (1, 2, ... per record; absent: none yet), written in the
   * same write as the change: a receiver tells the latest state from it whatever order the events arrive in.
   */
  eventSequence?: number;
  eventsKind?: RecordKind;
  eventsDueAt?: string;
  /**
   * While a settled record keeps its personal fields: the kind (partition key of the sparse `purge` index) and
   * when they are removed (its sort key, ISO).
   */
  purgeKind?: RecordKind;
  purgeAt?: string;
  /** When the personal fields of `record` were removed (ISO); after that the record cannot be redriven. */
  personalDataRemovedAt?: string;
  /** Epoch seconds: DynamoDB's TTL removes the status record after it (set when it settles). */
  expiresAt?: number;
}

/**
 * Names a record accepted under an `Idempotency-Key` (a keyed id) at the content's place it took: the first id when
 * free, else the place of the next generation (`generationId`). It is written before the record itself; a request
 * without a key sending the same content within 24 hours gets that record's id back (and writes the record if it is
 * not there yet).
 */
export interface ContentAlias {
  /** The place: the content's first id (`contentId`) or a generation's id. */
  id: string;
  /** The id of the record accepted with this content. */
  aliasOf: string;
  kind: RecordKind;
  owner: string;
  acceptedAt: string;
  /** At the first id, as on a first record: the newest generation place of the content taken since. */
  latestGeneration?: number;
  /** Epoch seconds: DynamoDB's TTL removes the alias after it (RECORD_RETENTION_DAYS after `acceptedAt`). */
  expiresAt?: number;
}

/** Where the request that first came with an `Idempotency-Key` stands. */
export type IdempotencyState = 'started' | 'done' | 'retry';

/** An `Idempotency-Key` seen in the last 24 hours, with a hash of the body it came with. */
export interface IdempotencyEntry {
  kind: RecordKind;
  keyHash: string;
  bodyHash: string;
  /** `started` while a request works on it, `done` once answered 200, `retry` after it answered 503. */
  state: IdempotencyState;
  /** When the request working on it started (ISO time): whoever holds the key is named by this. */
  startedAt: string;
  /** Epoch seconds; DynamoDB's TTL removes the entry after it. */
  expiresAt: number;
  /**
   * `keyed` when its request derived record ids from keyed content ids (lib/intake/recordIds.ts); absent on an
   * entry written before, whose repeats are answered, and whose records are made, with the ids it used then.
   */
  contentIds?: 'keyed';
}
