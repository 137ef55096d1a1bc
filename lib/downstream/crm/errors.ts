import { GatewayError } from '../../errors.ts';

/** Thrown when the CRM settings are missing or unusable; raised at start-up, never per record. */
export class CrmConfigError extends GatewayError {
  override name = 'CrmConfigError';
  constructor(message: string, options?: ErrorOptions) {
    super('crm-config', message, options);
  }
}

/** Thrown when a case mapping file is not valid; the message names the bad entry. A CRM setting, so one of those. */
export class CaseMappingError extends CrmConfigError {
  override name = 'CaseMappingError';
  override readonly code = 'case-mapping';
}
