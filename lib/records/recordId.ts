/**
 * What a record id looks like: 32 lower-case hex characters, always (lib/intake/recordIds.ts derives them; the
 * status look-up refuses anything else before it reads the table).
 *
 * @example
 * new RegExp(RECORD_ID_PATTERN).test('9b1f0c2d4e5f60718293a4b5c6d7e8f9') // true
 */
export const RECORD_ID_PATTERN = '^[0-9a-f]{32}$';
