import { type Environment, environment } from '../../settings/environment.ts';
import { required } from '../../settings/parsers.ts';
import { DEFAULT_ERP_BATCH_SIZE, DEFAULT_ERP_SERVICE_PATH, MAX_ERP_BATCH_SIZE } from './constants.ts';
import { ErpConfigError } from './errors.ts';
import type { ErpConfig } from './types.ts';

/**
 * ERP_BATCH_SIZE: the registrations one `$batch` call carries at most (SAP's, and test mode's simulated SAP's).
 *
 * @throws ErpConfigError when it is not a whole number from 1 to MAX_ERP_BATCH_SIZE.
 * @example
 * erpBatchSizeFrom({ ERP_BATCH_SIZE: '20' }) // 20
 */
export function erpBatchSizeFrom(env: Environment = environment()): number {
  const text = env.ERP_BATCH_SIZE?.trim();
  const size = text ? Number(text) : DEFAULT_ERP_BATCH_SIZE;
  if (!/^\d+$/.test(text ?? '1') || size < 1 || size > MAX_ERP_BATCH_SIZE) {
    throw new ErpConfigError(`setting ERP_BATCH_SIZE must be a whole number from 1 to ${MAX_ERP_BATCH_SIZE}`);
  }
  return size;
}

/**
 * Reads the ERP settings (docs/behaviour.md#sap-protocol) from the environment.
 *
 * @throws ErpConfigError when ERP_BASE_URL, ERP_USERNAME or ERP_PASSWORD is missing, the URL is not http(s),
 *   or ERP_BATCH_SIZE is not a whole number from 1 to MAX_ERP_BATCH_SIZE.
 * @example
 * const client = createErpClient(erpConfigFromEnv());
 */
export function erpConfigFromEnv(env: Environment = environment()): ErpConfig {
  const baseUrl = required('ERP_BASE_URL', env.ERP_BASE_URL?.trim(), ErpConfigError);
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new ErpConfigError('setting ERP_BASE_URL is not an http(s) URL');
  }
  const servicePath = env.ERP_SERVICE_PATH?.trim() || DEFAULT_ERP_SERVICE_PATH;
  if (!servicePath.startsWith('/')) throw new ErpConfigError('setting ERP_SERVICE_PATH must start with /');
  const sapClient = env.ERP_SAP_CLIENT?.trim();
  const batchSize = erpBatchSizeFrom(env);
  return {
    baseUrl,
    servicePath,
    username: required('ERP_USERNAME', env.ERP_USERNAME?.trim(), ErpConfigError),
    // Not trimmed: a password may legitimately start or end with a space.
    password: required('ERP_PASSWORD', env.ERP_PASSWORD, ErpConfigError),
    batchSize,
    ...(sapClient ? { sapClient } : {}),
  };
}
