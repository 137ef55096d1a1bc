import type { RecordKind } from '../types.ts';
import type { Downstream } from './types.ts';

/** The downstreams that can be held, in the order reports list them. */
export const DOWNSTREAMS: readonly Downstream[] = ['erp', 'crm'];

/** Partition key of a downstream's hold item in the records table (no record id has a `#`). */
export const holdKey = (downstream: Downstream): string => `hold#${downstream}`;

/** Writes that lose a compare-and-set are retried on a fresh read this many times before giving up. */
export const MAX_WRITE_ROUNDS = 5;

/** The downstream each kind of record goes to (as lib/delivery/downstreams.ts, without the clients it loads). */
export const DOWNSTREAM_OF_KIND: Readonly<Record<RecordKind, Downstream>> = {
  salesRegistration: 'erp',
  caseRecord: 'crm',
};
