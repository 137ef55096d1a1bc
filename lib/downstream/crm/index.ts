/** Salesforce REST adapter for cases (docs/behaviour.md#salesforce-protocol). */
export { type ApiUsage, parseApiUsage } from './apiUsage.ts';
export { createCrmClient } from './client.ts';
export { MAX_COLLECTION_SIZE } from './collections.ts';
export { crmConfigFromEnv } from './config.ts';
export {
  DEFAULT_CASE_EXTERNAL_ID_FIELD,
  DEFAULT_CRM_API_VERSION,
  DEFAULT_CRM_TIMEOUT_MS,
} from './constants.ts';
export { CaseMappingError, CrmConfigError } from './errors.ts';
export { mapCase } from './mapping.ts';
export { DEFAULT_CASE_MAPPING, loadCaseMapping, parseCaseMapping } from './mappingFile.ts';
export type { CaseMapping, CrmClient, CrmConfig, MappingRule } from './types.ts';
