/** Entity set of the custom SAP Gateway service that registers sales. */
export const DEFAULT_ERP_SERVICE_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';

/** CONTRACT section 3: downstream timeouts are 10 s. */
export const DEFAULT_ERP_TIMEOUT_MS = 10_000;
