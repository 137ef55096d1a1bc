/** Types the Salesforce sandbox's modules share (salesforceSandbox.ts, salesforceCollections.ts): in a file of their own, so neither imports the other. */
import type { SalesforceError } from '../lib/simulators/salesforceCaseRules.ts';

/**
 * A fault for the next matching request; queued faults are used up in order, one per request.
 * Without `status` or `dropConnection`, the request is processed normally after `delayMs`
 * (so a delayed upsert is stored even when the client has given up, as a slow org would).
 */
export interface SalesforceFault {
  /** `upsert` (default): the next Case upsert; `token`: the next token request; `collections`: the next Collections call. */
  on?: 'upsert' | 'token' | 'collections';
  /** Answer this status instead of processing (REST error array; OAuth error object on `token`). */
  status?: number;
  /** The error array of that answer; a sensible one per status otherwise (403: REQUEST_LIMIT_EXCEEDED). */
  errors?: SalesforceError[];
  /** Extra answer headers. */
  headers?: Record<string, string>;
  /** Wait this long before answering (longer than the client's timeout simulates a hung org). */
  delayMs?: number;
  /** Answer a non-JSON body: with `status`, instead of the error array; without, after storing the case. */
  malformedBody?: boolean;
  /** Close the connection without an answer (nothing is stored). */
  dropConnection?: boolean;
  /** Collections only: the records at these positions answer these errors, unprocessed (e.g. UNABLE_TO_LOCK_ROW). */
  recordErrors?: Record<number, SalesforceError[]>;
  /** Collections only: process the call (store what it upserts), then close the connection: a lost answer. */
  dropAnswer?: boolean;
  /** A single upsert: process the request, then close the connection instead of answering (the answer is lost). */
  loseAnswer?: boolean;
}

export interface StoredCase {
  /** Salesforce record id, `500…`. */
  id: string;
  /** Value of the external id field (the service's CrmId). */
  externalId: string;
  fields: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}
