import { createHash } from 'node:crypto';
import { RequestRefusedError } from '../http/errors.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';

/**
 * Where a console list continues: the `next` of a page, opaque to the console (base64url of JSON), bound to the
 * filters it was given for. Two shapes:
 * - a listing's (`p`): per partition of the `status` index (`<kind>#<state>`) the last key it gave, `[acceptedAt,
 *   id]`, or 0 once that partition is done; a partition not named starts from its newest record;
 * - a search's (`a`, `i`): the last row given, the rows after it in the list's order follow.
 * Nothing in a cursor reaches further than the person may read anyway; still every part is checked, so a garbled or
 * tampered cursor is a 400, never a read of something else.
 */
export type ListPosition =
  | { kind: 'listing'; partitions: Record<string, [acceptedAt: string, id: string] | 0> }
  | { kind: 'search'; acceptedAt: string; id: string };

/** A cursor is short: anything longer is not one of ours (and is not parsed). */
const MAX_CURSOR_LENGTH = 1_500;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RECORD_ID = new RegExp(RECORD_ID_PATTERN);

/**
 * The filters a cursor belongs to, as a short digest (of their entries in name order, so the same filters give the
 * same digest however built): a cursor of another list (other filters) is refused.
 */
export const filtersDigest = (filters: object): string =>
  createHash('sha256')
    .update(JSON.stringify(Object.entries(filters).sort(([a], [b]) => (a < b ? -1 : 1))))
    .digest('base64url')
    .slice(0, 16);

/**
 * The cursor of a position in the list of these filters.
 *
 * @example
 * cursorOf({ kind: 'search', acceptedAt: '2026-11-22T08:03:12.345Z', id: '3f0c…' }, filters) // 'eyJ2Ijox…'
 */
export const cursorOf = (position: ListPosition, filters: object): string => {
  const body =
    position.kind === 'listing'
      ? { f: filtersDigest(filters), p: position.partitions }
      : { f: filtersDigest(filters), a: position.acceptedAt, i: position.id };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
};

/** Refuses a cursor that is not the `next` of this list (400). */
export const garbled = (): never => {
  throw new RequestRefusedError(400, 'cursor must be the "next" of an earlier page of this list, unchanged');
};

const validKey = (value: unknown): value is [string, string] =>
  Array.isArray(value) &&
  value.length === 2 &&
  typeof value[0] === 'string' &&
  ISO.test(value[0]) &&
  !Number.isNaN(Date.parse(value[0])) &&
  typeof value[1] === 'string' &&
  RECORD_ID.test(value[1]);

/**
 * The position a cursor names, for the list of these filters, whose partitions are `partitions` (a listing's).
 *
 * @throws RequestRefusedError (400) for a cursor that is not base64url JSON of one of the two shapes, was given for
 * other filters, or names a partition outside the filters, a key that is no record's, or a malformed time.
 * @example
 * positionOf(query.cursor, filters, ['caseRecord#failed']) // { kind: 'listing', partitions: { 'caseRecord#failed': ['2026-…', '3f0c…'] } }
 */
export const positionOf = (cursor: string, filters: object, partitions: readonly string[]): ListPosition => {
  if (cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) return garbled();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return garbled();
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) return garbled();
  const { f, p, a, i, ...rest } = decoded as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof f !== 'string') return garbled();
  if (f !== filtersDigest(filters))
    throw new RequestRefusedError(
      400,
      'cursor belongs to a list with other filters: start again without cursor',
    );
  if (p !== undefined) {
    if (a !== undefined || i !== undefined || typeof p !== 'object' || p === null || Array.isArray(p))
      return garbled();
    const entries = Object.entries(p);
    if (entries.length === 0) return garbled();
    for (const [partition, key] of entries)
      if (!partitions.includes(partition) || !(key === 0 || validKey(key))) return garbled();
    return { kind: 'listing', partitions: p as Record<string, [string, string] | 0> };
  }
  if (!validKey([a, i])) return garbled();
  return { kind: 'search', acceptedAt: a as string, id: i as string };
};
