/** Reading settings from the environment, with one error text for each kind of fault. */

/**
 * A whole-number setting of at least 1, or `fallback` when unset.
 *
 * @example
 * positiveInteger('DELIVERY_MAX_ATTEMPTS', process.env.DELIVERY_MAX_ATTEMPTS, 5) // 5
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
 * required('RECORDS_TABLE', process.env.RECORDS_TABLE) // the table name, or throws
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
