import { caseProblems, type SalesforceError } from '../lib/simulators/salesforceCaseRules.ts';
import type { SalesforceFault, StoredCase } from './salesforceTypes.ts';
import type { Exchange, LoggedRequest } from './server.ts';

/** `PATCH /services/data/<version>/composite/sobjects/<type>/<external id field>`. */
export const COLLECTIONS_PATH = /^\/services\/data\/v\d+\.\d+\/composite\/sobjects\/([^/]+)\/([^/]+)$/;

/** Salesforce's limit of records per Collections call. */
const MAX_RECORDS = 200;

/** What the Salesforce sandbox lends its Collections handler. */
export interface CollectionsContext {
  externalIdField: string;
  extraFields: readonly string[];
  cases: StoredCase[];
  /** The next queued fault aimed at Collections calls. */
  nextFault(): SalesforceFault | undefined;
  /** Applies a fault's delay and whole-call answer; true when it answered (or dropped) the request. */
  applyFault(exchange: Exchange, fault: SalesforceFault | undefined): Promise<boolean>;
}

/** One record's result, as Salesforce answers it. */
interface CollectionResult {
  id?: string;
  success: boolean;
  created?: boolean;
  errors: { statusCode: string; message: string; fields: string[] }[];
}

const failed = (errors: SalesforceError[]): CollectionResult => ({
  success: false,
  errors: errors.map(({ errorCode, message, fields }) => ({ statusCode: errorCode, message, fields })),
});

const wholeCallError = (errorCode: string, message: string): SalesforceError[] => [
  { message, errorCode, fields: [] },
];

/**
 * Starts a handler for the sObject Collections upsert (docs/behaviour.md#batching):
 * up to 200 Case records, `allOrNone: false`, each upserted by its external id and judged by the same rules
 * as the single upsert (salesforceCaseRules.ts), the answer `200` with one result per record in order.
 * Faults `{ on: 'collections' }` apply to the whole call, except `recordErrors` (the records at those positions
 * answer those errors unprocessed, e.g. `UNABLE_TO_LOCK_ROW`; a refusal of content is not applied to a case already
 * held under that external id) and `dropAnswer` (process, then close the
 * connection: a lost answer).
 *
 * @example
 * const collections = collectionsHandler(context);
 * if (exchange.method === 'PATCH' && COLLECTIONS_PATH.test(path)) return collections(exchange);
 */
export function collectionsHandler(context: CollectionsContext): (exchange: Exchange) => Promise<void> {
  const upsert = (record: unknown, recordErrors: SalesforceError[] | undefined): CollectionResult => {
    // A content refusal cannot meet a case Salesforce already holds under this external id (the same content was
    // taken): only a lock (UNABLE_TO_LOCK_ROW) can. So a refusal planted on a repeat is not applied.
    const externalIdOf = (value: unknown) =>
      typeof value === 'object' && value !== null
        ? (value as Record<string, unknown>)[context.externalIdField]
        : undefined;
    const held = context.cases.some((stored) => stored.externalId === externalIdOf(record));
    const applies = recordErrors?.some((error) => error.errorCode === 'UNABLE_TO_LOCK_ROW') || !held;
    if (recordErrors && applies) return failed(recordErrors);
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      return failed(wholeCallError('JSON_PARSER_ERROR', 'A record is not a JSON object of Case fields'));
    }
    const {
      attributes,
      [context.externalIdField]: externalId,
      ...fields
    } = record as Record<string, unknown>;
    const type =
      typeof attributes === 'object' && attributes !== null
        ? (attributes as { type?: unknown }).type
        : undefined;
    if (type !== 'Case') {
      return failed(wholeCallError('INVALID_TYPE', 'attributes.type must be Case for this collection'));
    }
    if (typeof externalId !== 'string' || !externalId) {
      return failed([
        {
          message: `${context.externalIdField} not specified`,
          errorCode: 'MISSING_ARGUMENT',
          fields: [context.externalIdField],
        },
      ]);
    }
    const existing = context.cases.find((stored) => stored.externalId === externalId);
    const problems = caseProblems(fields, {
      externalIdField: context.externalIdField,
      creating: !existing,
      extraFields: context.extraFields,
    });
    if (problems.length > 0) return failed(problems);
    const now = new Date().toISOString();
    if (existing) {
      Object.assign(existing.fields, fields);
      existing.updatedAt = now;
      return { id: existing.id, success: true, created: false, errors: [] };
    }
    const stored: StoredCase = {
      id: `500SB${String(context.cases.length + 1).padStart(10, '0')}AAA`,
      externalId,
      fields,
      createdAt: now,
      updatedAt: now,
    };
    context.cases.push(stored);
    return { id: stored.id, success: true, created: true, errors: [] };
  };

  return async (exchange) => {
    const fault = context.nextFault();
    if (await context.applyFault(exchange, fault)) return;
    const [, objectType, field] = COLLECTIONS_PATH.exec(exchange.url.pathname) ?? [];
    if (objectType !== 'Case' || decodeURIComponent(field ?? '') !== context.externalIdField) {
      exchange.reply(404, wholeCallError('NOT_FOUND', 'The requested resource does not exist'));
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      body = undefined;
    }
    const records =
      typeof body === 'object' && body !== null ? (body as { records?: unknown }).records : undefined;
    if (!Array.isArray(records) || (body as { allOrNone?: unknown }).allOrNone !== false) {
      exchange.reply(
        400,
        wholeCallError(
          'JSON_PARSER_ERROR',
          'The body must be {"allOrNone": false, "records": [...]} for this sandbox',
        ),
      );
      return;
    }
    if (records.length > MAX_RECORDS) {
      exchange.reply(
        400,
        wholeCallError(
          'EXCEEDED_ID_LIMIT',
          `Record limit reached. Cannot submit more than ${MAX_RECORDS} records into this call`,
        ),
      );
      return;
    }
    const results = records.map((record, index) => upsert(record, fault?.recordErrors?.[index]));
    if (fault?.dropAnswer) {
      exchange.drop();
      return;
    }
    exchange.reply(200, results);
  };
}

/** A delivery call the Salesforce sandbox received, for `/_sandbox/calls`. */
export interface SalesforceDeliveryCall {
  kind: 'upsert' | 'collections';
  status: number;
  /** Cases the call carried. */
  cases: number;
}

/**
 * The single upserts and Collections calls among the requests a Salesforce sandbox received, in order: what a
 * person watching `GET /_sandbox/calls` sees of batching.
 *
 * @example
 * salesforceDeliveryCalls(sf.requests); // [{ kind: 'collections', status: 200, cases: 200 }, …]
 */
export function salesforceDeliveryCalls(requests: readonly LoggedRequest[]): SalesforceDeliveryCall[] {
  return requests.flatMap(({ method, path, status, body }): SalesforceDeliveryCall[] => {
    if (method !== 'PATCH') return [];
    const target = path.split('?')[0];
    if (COLLECTIONS_PATH.test(target)) {
      let cases = 0;
      try {
        const records = (JSON.parse(body) as { records?: unknown }).records;
        cases = Array.isArray(records) ? records.length : 0;
      } catch {
        // not a Collections body: it carried no case
      }
      return [{ kind: 'collections', status, cases }];
    }
    return /^\/services\/data\/[^/]+\/sobjects\//.test(target) ? [{ kind: 'upsert', status, cases: 1 }] : [];
  });
}
