/** Thrown when the CRM settings are missing or unusable; raised at start-up, never per record. */
export class CrmConfigError extends Error {
  override name = 'CrmConfigError';
}

/** Thrown when a case mapping file is not valid; the message names the bad entry. */
export class CaseMappingError extends CrmConfigError {
  override name = 'CaseMappingError';
}
