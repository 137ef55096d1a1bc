/** The `source` of every event the service publishes (EventBridge rules match on it). */
export const EVENT_SOURCE = 'dealer-gateway';

/** The `detail-type` of a record's change of state (detail: {@link RecordStateChanged}). */
export const RECORD_STATE_CHANGED = 'Record state changed';
