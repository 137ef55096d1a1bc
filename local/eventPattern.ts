/**
 * EventBridge's event patterns, as far as the stack's rules use them: every field the pattern names must hold one
 * of the pattern's listed values (an array field: any of its elements), nested objects matched field by field.
 * Content filters (`prefix`, `numeric`, `anything-but`, ...) are refused when a rule is read, never half-matched.
 */

/** A pattern as a rule's EventPattern holds it. */
export type EventPattern = { [field: string]: EventPattern | readonly (string | number | boolean | null)[] };

/**
 * Checks that a rule's pattern uses only what `matchesPattern` implements; throws naming the field otherwise.
 *
 * @example
 * checkEventPattern({ source: ['dealer-gateway'], detail: { client: ['a'] } }) // the pattern
 * checkEventPattern({ source: [{ prefix: 'x' }] }) // throws: content filters are not supported locally
 */
export const checkEventPattern = (pattern: unknown, where = 'EventPattern'): EventPattern => {
  if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern))
    throw new Error(`${where}: must be an object`);
  for (const [field, value] of Object.entries(pattern)) {
    if (Array.isArray(value)) {
      const filter = value.find((item) => item !== null && typeof item === 'object');
      if (filter !== undefined)
        throw new Error(
          `${where}.${field}: content filter ${JSON.stringify(filter)} is not supported by the local event bus`,
        );
    } else checkEventPattern(value, `${where}.${field}`);
  }
  return pattern as EventPattern;
};

/**
 * Whether an event (its envelope: source, detail-type, detail, ...) matches a pattern.
 *
 * @example
 * matchesPattern({ detail: { client: ['a', 'b'] } }, { source: 'x', detail: { client: 'b' } }) // true
 */
export const matchesPattern = (pattern: EventPattern, event: unknown): boolean => {
  if (event === null || typeof event !== 'object') return false;
  const fields = event as Record<string, unknown>;
  return Object.entries(pattern).every(([field, wanted]) => {
    const value = fields[field];
    if (!Array.isArray(wanted)) return matchesPattern(wanted as EventPattern, value);
    const values = Array.isArray(value) ? value : [value];
    return values.some((item) => value !== undefined && wanted.includes(item as never));
  });
};
