import { clientNamed } from '../clients/clientsConfig.ts';
import type { RecordStatus } from '../records/types.ts';
import type { RecordKind } from '../types.ts';

/** A record's kind as the console names it: the API's word for each store kind. */
export type ConsoleKind = 'salesRegistration' | 'crmCase';

/** The console's name of each store kind, and back. */
export const CONSOLE_KIND: Readonly<Record<RecordKind, ConsoleKind>> = {
  salesRegistration: 'salesRegistration',
  caseRecord: 'crmCase',
};
export const STORE_KIND: Readonly<Record<ConsoleKind, RecordKind>> = {
  salesRegistration: 'salesRegistration',
  crmCase: 'caseRecord',
};

/**
 * One row of a console list: ids, states, times and counts, never a customer's field (the contract's row shape).
 * `frameNumber` is null for a case: its frame number is kept only inside the record's content, which a list never
 * reads.
 */
export interface ConsoleRow {
  id: string;
  kind: ConsoleKind;
  client: string;
  frameNumber: string | null;
  state: RecordStatus;
  attempts: number;
  acceptedAt: string;
  updatedAt: string;
  test: boolean;
}

/** What a row is made of: a `status` index entry, a `frame` index entry or a record read without `record`. */
export interface RowSource {
  id: string;
  kind: RecordKind;
  status: RecordStatus;
  owner: string;
  frameKey?: string;
  attempts?: number;
  acceptedAt: string;
  updatedAt?: string;
  test?: boolean;
}

/**
 * Whether a client's records are test records: its mode in config/clients.json (the `status` index does not carry
 * a record's `test` mark; a client's mode decides it at intake, lib/clients/types.ts isTestCaller).
 */
export const isTestClient = (owner: string): boolean => clientNamed(owner)?.mode === 'test';

/**
 * The row of a record. The frame number is the part of `frameKey` after the owner (`<owner>#<FrameNum>`, client
 * names hold no `#`).
 *
 * @example
 * rowOf({ id: '3f0c…', kind: 'caseRecord', status: 'failed', owner: 'example-web-forms', acceptedAt, updatedAt })
 * // { id: '3f0c…', kind: 'crmCase', client: 'example-web-forms', frameNumber: null, state: 'failed', … }
 */
export const rowOf = (source: RowSource): ConsoleRow => {
  const hash = source.frameKey?.indexOf('#') ?? -1;
  return {
    id: source.id,
    kind: CONSOLE_KIND[source.kind],
    client: source.owner,
    frameNumber: source.frameKey && hash >= 0 ? source.frameKey.slice(hash + 1) : null,
    state: source.status,
    attempts: source.attempts ?? 0,
    acceptedAt: source.acceptedAt,
    updatedAt: source.updatedAt ?? source.acceptedAt,
    test: source.test === true || isTestClient(source.owner),
  };
};

/**
 * Newest first, and by id among records accepted at the same time: the one order of every console list, which the
 * cursors continue in.
 */
export const newestFirst = (a: ConsoleRow, b: ConsoleRow): number =>
  a.acceptedAt === b.acceptedAt
    ? a.id < b.id
      ? 1
      : a.id > b.id
        ? -1
        : 0
    : a.acceptedAt < b.acceptedAt
      ? 1
      : -1;
