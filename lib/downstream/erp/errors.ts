/** Thrown when the ERP settings are missing or unusable; raised at start-up, never per record. */
export class ErpConfigError extends Error {
  override name = 'ErpConfigError';
}
