/**
 * Test mode's outcomes, chosen by the customer's last name (docs/API.md, "Test mode"): compared without case,
 * `REJECT` is refused for its content, `RETRY` fails transiently twice and is then delivered, `FAIL` fails
 * transiently every time; any other name is delivered at once.
 */

/** What the simulator does with one record. */
export type Scenario = 'deliver' | 'reject' | 'retry' | 'fail';

/** Transient failures a `RETRY` record meets before it is delivered (so it is delivered with `attempts` 3). */
export const RETRY_FAILURES = 2;

/**
 * The scenario a last name asks for.
 *
 * @example
 * scenarioOf('Reject') // 'reject'
 * scenarioOf('Sample') // 'deliver'
 */
export const scenarioOf = (lastName: unknown): Scenario => {
  const name = typeof lastName === 'string' ? lastName.trim().toUpperCase() : '';
  if (name === 'REJECT') return 'reject';
  if (name === 'RETRY') return 'retry';
  if (name === 'FAIL') return 'fail';
  return 'deliver';
};

/**
 * An id derived from a record id: the same record always gets the same downstream id (a repeat is no new
 * document), and ids of different records differ.
 *
 * @example
 * derivedDigits('3f0c…', 6) // '204817'
 */
export const derivedDigits = (recordId: string, length: number, alphabet = '0123456789'): string => {
  let state = 0x811c9dc5;
  let out = '';
  for (let i = 0; out.length < length; i++) {
    state ^= recordId.charCodeAt(i % recordId.length) + i;
    state = Math.imul(state, 0x01000193) >>> 0;
    out += alphabet[state % alphabet.length];
  }
  return out;
};
