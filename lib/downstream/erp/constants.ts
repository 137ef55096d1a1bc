/** Entity set of the custom SAP Gateway service that registers sales. */
export const DEFAULT_ERP_SERVICE_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';

/**
 * At most this many registrations in one `$batch` call unless ERP_BATCH_SIZE says otherwise
 * (docs/behaviour.md#batching).
 */
export const DEFAULT_ERP_BATCH_SIZE = 50;

/** ERP_BATCH_SIZE may not exceed this: SAP Gateway limits the operations of one `$batch`, and a call times out as a whole. */
export const MAX_ERP_BATCH_SIZE = 1000;

/** Downstream calls time out after 10 s (docs/behaviour.md#delivery-and-retries). */
export const DEFAULT_ERP_TIMEOUT_MS = 10_000;
