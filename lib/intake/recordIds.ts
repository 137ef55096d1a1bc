import { createHash } from 'node:crypto';
import type { RecordKind } from '../types.ts';

/** JSON with keys sorted at every level, so equal content always gives the same text. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
};

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The id of a record is derived from its kind, its owner (the calling client) and normalised content: 32
 * lower-case hex characters. Each client has its own records: another client's identical content is not its duplicate.
 * Equal content gets the same id, so a retried or duplicated request finds the record it already created
 * (one read instead of a separate duplicate-detection entry), and two copies of a message are the same record.
 * Lower case because Salesforce external ids are case-insensitive by default.
 *
 * @example
 * contentId('caseRecord', { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' }, 'example-web-forms') // '9b1f…'
 */
export const contentId = (kind: RecordKind, record: object, owner: string): string =>
  sha256(`${kind}\n${owner}\n${canonicalJson(record)}`).slice(0, 32);

/**
 * The id of the same content accepted again after the duplicate window, generation `generation` (1, 2, …) of the
 * content whose first id is `firstId`. Derived, not random, so that two requests racing to accept the content again
 * both name the same record, and only one of them can create it. 32 hex characters like every record id: SAP's
 * `RegistrationId` and Salesforce's external id hold no more.
 *
 * @example
 * generationId('9b1f…', 1) // '4c2e…' (32 hex characters)
 */
export const generationId = (firstId: string, generation: number): string =>
  generation === 0 ? firstId : sha256(`${firstId}\ngeneration ${generation}`).slice(0, 32);

/**
 * The id of a record accepted under an `Idempotency-Key`: the key, not the content alone, decides what is a
 * repeat, so the same content under a new key is a new record. Identical records within one request are still
 * one record.
 *
 * @example
 * keyedId('3a7d…', '9b1f…') // '0e55…'
 */
export const keyedId = (keyHash: string, contentIdOfRecord: string): string =>
  sha256(`${keyHash}\n${contentIdOfRecord}`).slice(0, 32);
