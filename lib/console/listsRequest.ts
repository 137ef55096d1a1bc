import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '../http/responses.ts';
import { cursorOf, garbled, positionOf } from './listCursor.ts';
import { type ListFilters, listFiltersOf } from './listFilters.ts';
import { listingPartitions, listRecords } from './recordListing.ts';
import { searchRecords } from './recordSearch.ts';
import type { ConsoleRow } from './rows.ts';

/** The page of a list as the console gets it: rows and, while there are more, the cursor of the next page. */
const pageAnswer = (rows: ConsoleRow[], next: string | undefined): APIGatewayProxyResult =>
  jsonResponse(200, { records: rows, ...(next ? { next } : {}) });

/** A page of the records the filters select: a search when `q` is given, else a listing (lib/console/recordListing.ts). */
const recordsPage = async (
  filters: ListFilters,
  cursor: string | undefined,
): Promise<APIGatewayProxyResult> => {
  const partitions = listingPartitions(filters);
  const position = cursor === undefined ? undefined : positionOf(cursor, filters, partitions);
  if (filters.q !== undefined) {
    // A listing's cursor with a `q` now (or the other way round): the filters' digest matched, the shape does not.
    if (position && position.kind !== 'search') return garbled();
    const page = await searchRecords({ ...filters, q: filters.q }, position);
    return pageAnswer(page.rows, page.next && cursorOf(page.next, filters));
  }
  if (position && position.kind !== 'listing') return garbled();
  const page = await listRecords(filters, position);
  return pageAnswer(page.rows, page.next && cursorOf(page.next, filters));
};

/**
 * `GET /console/api/records?q=&kind=&state=&client=&mode=&from=&to=&cursor=`: the records found by `q` (a frame
 * number, a record id, an SAP document number or a Salesforce id) and the filters, newest first, a page at a time;
 * rows hold no personal data. A bad parameter or cursor: 400 naming it and its rule.
 *
 * @example
 * await recordsAnswer(event) // 200 {"records":[{"id":"3f0c…","kind":"salesRegistration",…}],"next":"eyJm…"}
 */
export const recordsAnswer = (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const query = event.queryStringParameters ?? {};
  const filters = listFiltersOf(query);
  return recordsPage(filters, query.cursor || undefined);
};

/**
 * `GET /console/api/failed?cursor=`: the `failed` records of both kinds, newest first, a page at a time (the
 * listing of `state=failed`).
 *
 * @example
 * await failedAnswer(event) // 200 {"records":[{"state":"failed",…}],"next":"eyJm…"}
 */
export const failedAnswer = (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const query = event.queryStringParameters ?? {};
  listFiltersOf(query, ['cursor']);
  return recordsPage({ state: 'failed' }, query.cursor || undefined);
};
