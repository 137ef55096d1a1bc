/** The `source` of every event the service publishes (EventBridge rules match on it). */
export const EVENT_SOURCE = 'dealer-gateway';

/** The `detail-type` of a record's change of state (detail: {@link RecordStateChanged}). */
export const RECORD_STATE_CHANGED = 'Record state changed';

/**
 * The header that carries a client's webhook secret (on AWS the API destination's connection sends it, locally the
 * local event bus does), so that the receiver can trust the event.
 */
export const WEBHOOK_SECRET_HEADER = 'X-Dealer-Gateway-Secret';
