/** The parsers of settings' texts, with one error text for each kind of fault: each names the setting. */

/**
 * A whole-number setting of at least 1, or `fallback` when unset.
 *
 * @example
 * positiveInteger('DELIVERY_MAX_ATTEMPTS', env.DELIVERY_MAX_ATTEMPTS, 5) // 5
 */
export const positiveInteger = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1)
    throw new Error(`setting ${name} must be a whole number of at least 1`);
  return parsed;
};

/**
 * A setting that must be set: its value, or `Failure` (an Error by default) saying `setting <name> is not set`
 * when it is unset or empty. The caller decides whether the value is trimmed first.
 *
 * @example
 * required('RECORDS_TABLE', env.RECORDS_TABLE) // the table name, or throws
 * required('ERP_USERNAME', env.ERP_USERNAME?.trim(), ErpConfigError)
 */
export const required = (
  name: string,
  value: string | undefined,
  Failure: new (message: string) => Error = Error,
): string => {
  if (!value) throw new Failure(`setting ${name} is not set`);
  return value;
};

/**
 * A share above 0 and at most 1, or `fallback` when unset.
 *
 * @example
 * share('CRM_API_USAGE_SHARE', '0.5', 0.8) // 0.5
 */
export const share = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0 || parsed > 1)
    throw new Error(`setting ${name} must be a number above 0 and at most 1`);
  return parsed;
};

/**
 * A whole number of seconds, 0 allowed, or `fallback` when unset.
 *
 * @example
 * seconds('OUTAGE_STATE_CACHE_SECONDS', '0', 5) // 0
 */
export const seconds = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new Error(`setting ${name} must be a whole number of at least 0`);
  return parsed;
};
