import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerName } from '../clients/types.ts';
import { type CallerContext, callerOf } from '../http/callerIdentity.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, FEED_LIMIT_MIN } from './constants.ts';
import { cursorOf, feedKeyAfter } from './feedCursor.ts';
import { feedPage } from './feedPage.ts';

/** A query parameter given at most once (undefined when absent); a repeated one: 400. */
const single = (event: APIGatewayProxyEvent, name: string): string | undefined => {
  const values = event.multiValueQueryStringParameters?.[name];
  if (values && values.length > 1) throw new RequestRefusedError(400, `${name} must be a single value`);
  return event.queryStringParameters?.[name] ?? values?.[0];
};

/** `limit`: a whole number from 1 to 100, 50 when absent. */
const limitOf = (event: APIGatewayProxyEvent): number => {
  const value = single(event, 'limit');
  if (value === undefined) return FEED_LIMIT_DEFAULT;
  const limit = /^\d{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= FEED_LIMIT_MIN && limit <= FEED_LIMIT_MAX))
    throw new RequestRefusedError(
      400,
      `limit must be a whole number from ${FEED_LIMIT_MIN} to ${FEED_LIMIT_MAX}`,
    );
  return limit;
};

/**
 * `GET /events?after=<cursor>&limit=<n>`: the caller's own events, oldest first, 30 days back, a page at a time
 * (lib/feed/feedPage.ts); `next` is the cursor of the following page, null on the last. A malformed, foreign or
 * expired cursor, or a `limit` out of range: 400 naming the parameter and its rule (lib/feed/feedCursor.ts).
 *
 * @example
 * await feedRequest({ ...event, queryStringParameters: { limit: '2' } }, context)
 * // 200 {"events":[{"id":"3f0c…:…","type":"record.delivered","timestamp":"…","data":{…,"sequence":1}}],"next":null}
 */
export const feedRequest = async (
  event: APIGatewayProxyEvent,
  context: CallerContext,
  now: () => Date = () => new Date(),
): Promise<APIGatewayProxyResult> => {
  const client = callerName(callerOf(context));
  const limit = limitOf(event);
  const after = single(event, 'after');
  const at = now();
  const afterKey = after === undefined ? undefined : feedKeyAfter(after, client, at);
  const page = await feedPage(client, { afterKey, limit, now: at });
  return jsonResponse(200, {
    events: page.events,
    next: page.lastKey === undefined ? null : cursorOf(client, page.lastKey),
  });
};
