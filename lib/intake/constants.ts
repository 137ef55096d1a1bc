/** A record with the same normalised content accepted within this window is the same record. */
export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** An `Idempotency-Key` is remembered this long. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * A duplicate of a record that is still `accepted`, untouched by the worker for this long, is queued again:
 * the request that accepted it may have died between writing its status and queueing it. Far longer than an
 * intake request can run (API Gateway stops at 29 s), so a live request is never second-guessed.
 */
export const REQUEUE_UNTOUCHED_AFTER_MS = 5 * 60 * 1000;
