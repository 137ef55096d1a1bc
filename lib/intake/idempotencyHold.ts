import {
  claimIdempotencyKey,
  readIdempotencyEntry,
  setIdempotencyState,
} from '../store/idempotencyEntries.ts';
import type { CallOptions } from '../store/statusRecords.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../types.ts';
import { IDEMPOTENCY_TAKEOVER_MS, IDEMPOTENCY_WINDOW_SECONDS } from './constants.ts';
import { IdempotencyConflictError, IdempotencyInProgressError } from './errors.ts';
import { canonicalJson, sha256 } from './recordIds.ts';

export interface KeyRequest {
  kind: RecordKind;
  keyHash: string;
  records: (SalesRegistration | CaseRecord)[];
  now: Date;
  options: CallOptions;
}

export interface KeyHold {
  /** True when an earlier request with this key and body was answered 200: answer the same, do nothing. */
  answered: boolean;
  /**
   * True when the key's entry was written before content ids were keyed: the answer, and any record still to be
   * made, use the ids that request used (lib/intake/recordIds.ts, `legacyContentId`), so a retry across the change
   * gets the same ids.
   */
  legacyIds: boolean;
  /**
   * True when this request took over a key whose earlier request died (never answered, never released the key):
   * records that request stored may never have been queued, unmarked (lib/intake/unqueued.ts). One that failed
   * with 503 marked those it could not queue.
   */
  earlierDied: boolean;
  /** After a 200: later repeats are answered from the entry. Best effort: a lost write only delays them. */
  complete(): Promise<void>;
  /** After a failure: the caller's retry with the same body may take the key over at once. Best effort. */
  release(): Promise<void>;
}

/** Clean-up writes get a second of their own: the request's deadline may be what failed it. */
const cleanupOptions = (): CallOptions => ({ abortSignal: AbortSignal.timeout(1000) });

/**
 * Takes an `Idempotency-Key` for this request, or says why not. A new key is taken with one conditional write.
 * A key seen before with another body is refused (422); one whose first request is still being processed gets
 * 409; one answered 200 before is answered again; one whose request failed (503) or died is taken over.
 *
 * @throws IdempotencyConflictError, IdempotencyInProgressError
 * @example
 * const hold = await holdIdempotencyKey({ kind, keyHash, records, now, options });
 * if (!hold.answered) { …create and queue…; await hold.complete(); }
 */
export const holdIdempotencyKey = async (request: KeyRequest): Promise<KeyHold> => {
  const { kind, keyHash, now, options } = request;
  // The normalised records stand for the body: equal content in another layout is the same body.
  const bodyHash = sha256(canonicalJson(request.records));
  const startedAt = now.toISOString();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const held: KeyHold = {
    answered: false,
    legacyIds: false,
    earlierDied: false,
    complete: async () => {
      await setIdempotencyState(
        kind,
        keyHash,
        { heldSince: startedAt, state: 'done' },
        cleanupOptions(),
      ).catch(() => undefined);
    },
    release: async () => {
      await setIdempotencyState(
        kind,
        keyHash,
        { heldSince: startedAt, state: 'retry' },
        cleanupOptions(),
      ).catch(() => undefined);
    },
  };
  const entry = {
    kind,
    keyHash,
    bodyHash,
    state: 'started' as const,
    startedAt,
    expiresAt: nowSeconds + IDEMPOTENCY_WINDOW_SECONDS,
    contentIds: 'keyed' as const,
  };
  if (await claimIdempotencyKey(entry, nowSeconds, options)) return held;

  const earlier = await readIdempotencyEntry(kind, keyHash, options);
  // Gone between the two calls (expired and removed): a second claim decides.
  if (!earlier) {
    if (await claimIdempotencyKey(entry, nowSeconds, options)) return held;
    throw new IdempotencyInProgressError();
  }
  if (earlier.bodyHash !== bodyHash) throw new IdempotencyConflictError();
  const legacyIds = earlier.contentIds !== 'keyed';
  if (earlier.state === 'done') return { ...held, answered: true, legacyIds };
  const running = now.getTime() - Date.parse(earlier.startedAt) < IDEMPOTENCY_TAKEOVER_MS;
  if (earlier.state === 'started' && running) throw new IdempotencyInProgressError();
  // Failed (503) or died: take the key over, unless another retry just did.
  const taken = await setIdempotencyState(
    kind,
    keyHash,
    { heldSince: earlier.startedAt, state: 'started', startedAt },
    options,
  );
  if (!taken) throw new IdempotencyInProgressError();
  return { ...held, legacyIds, earlierDied: earlier.state === 'started' };
};
