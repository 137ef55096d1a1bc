/** A record with the same normalised content accepted within this window is the same record. */
export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * Generations of one content tried in one request before giving up: more would mean a clock or data fault, not
 * traffic (the hint on the first record, `latestGeneration`, starts every walk at the newest).
 */
export const MAX_GENERATIONS_PER_REQUEST = 8;
/** An `Idempotency-Key` is remembered this long. */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * A request holding an `Idempotency-Key` for longer than this has died (the function times out after 10 s, API
 * Gateway gives up after 29 s): a retry with the same body takes the key over instead of getting 409.
 */
export const IDEMPOTENCY_TAKEOVER_MS = 30 * 1000;
/** Time kept back from the function's remaining time to answer 503 when AWS calls run late. */
export const ANSWER_RESERVE_MS = 1500;
