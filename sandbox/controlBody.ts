import type { Exchange } from './server.ts';

/**
 * Reads the JSON object body of a `/_sandbox/` control request, or says which rule it breaks.
 *
 * @example
 * const body = jsonObjectBody(exchange); // { down: true }, or 'the body must be a JSON object'
 */
export const jsonObjectBody = (exchange: Exchange): Record<string, unknown> | string => {
  try {
    const parsed: unknown = JSON.parse(exchange.body || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // reported below
  }
  return 'the body must be a JSON object';
};
