/** Reading numeric settings from the environment, with one error text for all of them. */

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
