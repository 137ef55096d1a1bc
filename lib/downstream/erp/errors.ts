import { GatewayError } from '../../errors.ts';

/** Thrown when the ERP settings are missing or unusable; raised at start-up, never per record. */
export class ErpConfigError extends GatewayError {
  override name = 'ErpConfigError';
  constructor(message: string, options?: ErrorOptions) {
    super('erp-config', message, options);
  }
}
