import type { Downstream } from './types.ts';

/** The downstreams that can be held, in the order reports list them. */
export const DOWNSTREAMS: readonly Downstream[] = ['erp', 'crm'];

/** Partition key of a downstream's hold item in the records table (no record id has a `#`). */
export const holdKey = (downstream: Downstream): string => `hold#${downstream}`;

/**
 * A Salesforce API usage reading is stored on its own (a write of the hold that changes nothing else) at most this
 * often; a write the hold makes anyway carries the newest reading. What the Downstreams page shows is at most this
 * old while Salesforce answers; about one extra write a minute while cases flow (none while they do not).
 */
export const API_USAGE_REFRESH_SECONDS = 60;

/** Writes that lose a compare-and-set are retried on a fresh read this many times before giving up. */
export const MAX_WRITE_ROUNDS = 5;

/**
 * Below this chance that a record with no fault of its own fails alone as often as it has, its failures are its own
 * (lib/outage/rules.ts, loneFailure). A record without fault then still needs DELIVERY_MAX_ATTEMPTS more failures to
 * end `failed`: docs/design.md ("How it works": a flapping downstream) puts that at about 2e-6 per record at worst.
 */
export const FAULTLESS_CHANCE_BOUND = 1e-6;

export { DOWNSTREAM_OF_KIND } from '../types.ts';
