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

/** The id of the same content accepted again after the duplicate window: the first id plus the time, base 36. */
export const laterId = (firstId: string, acceptedAt: Date): string =>
  `${firstId}-${Math.floor(acceptedAt.getTime() / 1000).toString(36)}`;

/** What a record id looks like: 32 hex characters, plus `-<time>` for content accepted again after 24 hours. */
export const RECORD_ID_PATTERN = '^[0-9a-f]{32}(-[0-9a-z]{1,12})?$';
