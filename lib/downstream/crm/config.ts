import { type Environment, environment } from '../../settings/environment.ts';
import { required } from '../../settings/parsers.ts';
import {
  DEFAULT_CASE_EXTERNAL_ID_FIELD,
  DEFAULT_CRM_API_VERSION,
  SALESFORCE_FIELD_PATTERN,
} from './constants.ts';
import { CrmConfigError } from './errors.ts';
import { loadCaseMapping } from './mappingFile.ts';
import type { CrmConfig } from './types.ts';

/**
 * Reads the CRM settings (docs/behaviour.md#salesforce-protocol) from the environment; a CRM_CASE_MAPPING_FILE is read and
 * validated here, so a bad file stops the start rather than every delivery.
 *
 * @throws CrmConfigError (or its CaseMappingError) naming the bad setting or mapping entry.
 * @example
 * const client = createCrmClient(crmConfigFromEnv());
 */
export function crmConfigFromEnv(env: Environment = environment()): CrmConfig {
  const baseUrl = required('CRM_BASE_URL', env.CRM_BASE_URL?.trim(), CrmConfigError);
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new CrmConfigError('setting CRM_BASE_URL is not an http(s) URL');
  }
  const apiVersion = env.CRM_API_VERSION?.trim() || DEFAULT_CRM_API_VERSION;
  if (!/^v\d+\.\d+$/.test(apiVersion))
    throw new CrmConfigError('setting CRM_API_VERSION must look like v66.0');
  const externalIdField = env.CRM_CASE_EXTERNAL_ID_FIELD?.trim() || DEFAULT_CASE_EXTERNAL_ID_FIELD;
  if (!SALESFORCE_FIELD_PATTERN.test(externalIdField)) {
    throw new CrmConfigError('setting CRM_CASE_EXTERNAL_ID_FIELD is not a Salesforce field name');
  }
  const mappingFile = env.CRM_CASE_MAPPING_FILE?.trim();
  return {
    baseUrl,
    clientId: required('CRM_CLIENT_ID', env.CRM_CLIENT_ID?.trim(), CrmConfigError),
    clientSecret: required('CRM_CLIENT_SECRET', env.CRM_CLIENT_SECRET?.trim(), CrmConfigError),
    apiVersion,
    externalIdField,
    ...(mappingFile ? { mapping: loadCaseMapping(mappingFile) } : {}),
  };
}
