/**
 * `GET /events` (`listEvents`): the caller's event feed, a page at a time. The 200 example is built by the service's
 * own code (the event of lib/events, its feed entry and cursor of lib/feed); the 400 examples are the texts the feed
 * answers (tests/openapi checks them against the handler).
 */
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import { webhookEventOf, webhookIdOf } from '../../lib/events/webhookEvent.ts';
import { FEED_LIMIT_DEFAULT, FEED_LIMIT_MAX, FEED_LIMIT_MIN } from '../../lib/feed/constants.ts';
import { cursorOf } from '../../lib/feed/feedCursor.ts';
import { feedKeyOf } from '../../lib/feed/feedKey.ts';
import { statusShape } from '../../lib/http/shapes.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { ref } from './components.ts';
import { bodyOf, EXAMPLE_REFERENCE, example } from './examples.ts';
import { markdown } from './markdown.ts';
import { jsonContent, response } from './responses.ts';
import type { JsonObject } from './schemaConversion.ts';

const CLIENT = 'example-dealer';

/** A sale of the example client: delivered, as its first change. */
const deliveredSale = () => {
  const sale = {
    id: '0a9b4a55bf908d736c42b1e3048e0548',
    kind: 'salesRegistration',
    owner: CLIENT,
    status: 'accepted',
    acceptedAt: '2026-11-23T01:18:37.644Z',
    record: { DealerId: 1234, FrameNum: 'JH2PC40A1XM000001' },
  } as unknown as StatusRecord;
  return stateChangeOf(sale, {
    state: 'delivered',
    attempts: 1,
    at: new Date('2026-11-23T01:18:38.102Z'),
    downstreamId: '0090012345',
  });
};

/** A case of the example client that Salesforce refused. */
const rejectedCase = () => {
  const kase = {
    id: '7c1e0f4b9a2d4e6f8a0b1c2d3e4f5a6b',
    kind: 'caseRecord',
    owner: CLIENT,
    status: 'accepted',
    acceptedAt: '2026-11-23T01:19:02.310Z',
  } as unknown as StatusRecord;
  return stateChangeOf(kase, {
    state: 'rejected',
    attempts: 1,
    at: new Date('2026-11-23T01:19:03.871Z'),
    error: 'Required fields are missing: [Subject]',
  });
};

const entryOf = (event: ReturnType<typeof deliveredSale>): JsonObject =>
  ({ id: webhookIdOf(event), ...webhookEventOf(event) }) as unknown as JsonObject;

/**
 * GET /events: every answer of the contract but 403 (`withRefusal` adds it).
 *
 * @example
 * withRefusal(feedOperation(), 'FeedRefused', statusShape)
 */
export const feedOperation = (): JsonObject => {
  const first = deliveredSale();
  const second = rejectedCase();
  const next = cursorOf(CLIENT, feedKeyOf(new Date('2026-11-23T01:18:38.140Z'), first.eventId));
  const refused = (reason: string) => bodyOf(statusShape.refused(400, reason));
  return {
    tags: ['Status'],
    operationId: 'listEvents',
    summary: 'Your events, oldest first (catch up after downtime)',
    description: markdown('operations/listEvents.md'),
    parameters: [
      {
        name: 'after',
        in: 'query',
        required: false,
        description:
          'The `next` of the page read before; absent: from the start of the 30 days. A cursor of another client, ' +
          'or older than 30 days: 400.',
        schema: { type: 'string', maxLength: 300 },
        example: next,
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: `Events a page at most: a whole number from ${FEED_LIMIT_MIN} to ${FEED_LIMIT_MAX}.`,
        schema: {
          type: 'integer',
          minimum: FEED_LIMIT_MIN,
          maximum: FEED_LIMIT_MAX,
          default: FEED_LIMIT_DEFAULT,
        },
        example: 2,
      },
    ],
    responses: {
      '200': response(
        'A page of your events, oldest first; `next` null on the last page.',
        jsonContent(ref('EventFeedPage'), {
          page: example('A page with more to follow (limit=1)', { events: [entryOf(first)], next }),
          last: example('The last page', { events: [entryOf(second)], next: null }),
          empty: example('Nothing new', { events: [], next: null }),
        }),
      ),
      '400': response(
        'A malformed, foreign or expired cursor, or a limit out of range.',
        jsonContent(ref('FeedRefused'), {
          malformedCursor: example(
            'Not a cursor of this feed',
            refused('after must be a cursor this feed gave (the "next" of an earlier page)'),
          ),
          foreignCursor: example(
            'Another client’s cursor',
            refused('after must be a cursor given to this client'),
          ),
          expiredCursor: example(
            'A cursor older than 30 days',
            refused('after is an expired cursor: the feed reaches 30 days back; start again without after'),
          ),
          limitOutOfRange: example(
            'limit=0',
            refused(`limit must be a whole number from ${FEED_LIMIT_MIN} to ${FEED_LIMIT_MAX}`),
          ),
        }),
      ),
      '500': response(
        'Unexpected error; quote the reference to the web services team.',
        jsonContent(ref('StatusUnexpectedError'), {
          unexpected: example('Unexpected error', bodyOf(statusShape.unexpected(500, EXAMPLE_REFERENCE))),
        }),
      ),
    },
  };
};
