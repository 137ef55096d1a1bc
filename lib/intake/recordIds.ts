import { createHash, createHmac } from 'node:crypto';
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

/** Hex SHA-256 of a text. @example sha256('abc') // 'ba7816bf…' */
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The text a content id is derived from: kind, owner and the normalised content. */
const contentText = (kind: RecordKind, record: object, owner: string) =>
  `${kind}\n${owner}\n${canonicalJson(record)}`;

/**
 * The id of a record is derived from its kind, its owner (the calling client) and normalised content: the first 32
 * lower-case hex characters of their HMAC-SHA-256 under the stage's secret key (lib/intake/contentIdKey.ts). Each
 * client has its own records: another client's identical content is not its duplicate. Equal content gets the same
 * id within a stage, so a retried or duplicated request finds the record it already created (one read instead of a
 * separate duplicate-detection entry), and two copies of a message are the same record. Keyed because the id
 * outlives the personal data (in the store, events, the feed, SAP and Salesforce): without the key, whoever holds
 * an id and the kept fields could confirm a guessed name, e-mail or phone offline. Lower case because Salesforce
 * external ids are case-insensitive by default.
 *
 * @example
 * contentId('test-content-id-key', 'caseRecord', { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' }, 'example-web-forms') // '13a41acd…'
 */
export const contentId = (key: string, kind: RecordKind, record: object, owner: string): string =>
  createHmac('sha256', key)
    .update(contentText(kind, record, owner))
    .digest('hex')
    .slice(0, 32);

/**
 * The id the same content had before content ids were keyed (an unkeyed SHA-256). Read only to recognise, during
 * the change, a repeat of content accepted under it within the duplicate window (lib/intake/acceptContent.ts,
 * lib/intake/idempotencyHold.ts): no record is created under it any more. Once every stage has run with keyed ids
 * for longer than that window, no such repeat can come, and this goes.
 *
 * @example
 * legacyContentId('caseRecord', { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' }, 'example-web-forms') // 'a876…'
 */
export const legacyContentId = (kind: RecordKind, record: object, owner: string): string =>
  sha256(contentText(kind, record, owner)).slice(0, 32);

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
