/** SAP Gateway OData v2 adapter for sales registrations (docs/behaviour.md#sap-protocol). */
export { createErpClient } from './client.ts';
export { erpBatchSizeFrom, erpConfigFromEnv } from './config.ts';
export { DEFAULT_ERP_BATCH_SIZE, DEFAULT_ERP_SERVICE_PATH, DEFAULT_ERP_TIMEOUT_MS } from './constants.ts';
export { ErpConfigError } from './errors.ts';
export type { ErpClient, ErpConfig } from './types.ts';
