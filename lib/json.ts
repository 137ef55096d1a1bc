/** Small JSON helpers for text from outside (downstream answers, files): never throw on bad input. */

/** A plain JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The parsed text, or undefined when it is not JSON.
 *
 * @example
 * parseJsonOrUndefined('<html>') // undefined
 */
export const parseJsonOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
