/**
 * The event feed's schemas (GET /events, tools/openapi/feedOperation.ts): a page, an entry, a refusal. Written
 * here: the service builds the feed's answers in code (lib/feed), not from a schema.
 */
import { FEED_LIMIT_MAX } from '../../lib/feed/constants.ts';
import { ref, testMark } from './components.ts';
import type { JsonObject } from './schemaConversion.ts';

/**
 * The feed's schemas, for the document's `components`.
 *
 * @example
 * feedSchemas().EventFeedPage.required // ['events', 'next']
 */
export const feedSchemas = (): JsonObject => ({
  FeedEvent: {
    title: 'Event',
    description:
      'A change of one of your records, as its webhook body says it, with the webhook-id as `id`. No personal data.',
    type: 'object',
    required: ['id', 'type', 'timestamp', 'data'],
    properties: {
      id: {
        description:
          'The event’s id: the same on every copy of the change (the webhook-id header of its webhook).',
        type: 'string',
      },
      type: {
        type: 'string',
        enum: ['record.delivered', 'record.rejected', 'record.failed', 'record.accepted'],
      },
      timestamp: {
        description: 'When the state changed (ISO 8601, UTC).',
        type: 'string',
        format: 'date-time',
      },
      data: {
        type: 'object',
        required: ['recordId', 'kind', 'state', 'previousState', 'attempts', 'sequence'],
        properties: {
          recordId: ref('RecordId'),
          kind: { type: 'string', enum: ['salesRegistration', 'caseRecord'] },
          state: { type: 'string', enum: ['accepted', 'delivered', 'rejected', 'failed'] },
          previousState: { type: 'string', enum: ['accepted', 'delivered', 'rejected', 'failed'] },
          attempts: {
            description: 'Delivery requests that reached the downstream system.',
            type: 'integer',
            minimum: 0,
          },
          sequence: {
            description:
              '1, 2, ... per record, in the order of its changes: the highest you have seen is the record’s latest state.',
            type: 'integer',
            minimum: 1,
          },
          downstreamId: {
            description: 'The record’s id in the ERP or CRM, when it gave one.',
            type: 'string',
          },
          error: { description: 'Why it was refused or failed; personal data blanked out.', type: 'string' },
          FrameNum: { description: 'Sales only: the frame number.', type: 'string' },
          DealerId: { description: 'Sales only: the dealer.', type: 'integer' },
          test: testMark('event'),
        },
      },
    },
  },
  EventFeedPage: {
    title: 'Event feed page',
    type: 'object',
    required: ['events', 'next'],
    properties: {
      events: { type: 'array', maxItems: FEED_LIMIT_MAX, items: ref('FeedEvent') },
      next: {
        description: 'The cursor of the next page (pass it as `after`); null on the last page.',
        type: ['string', 'null'],
      },
    },
  },
  FeedRefused: {
    title: 'Event feed: refused',
    type: 'object',
    required: ['message'],
    properties: { message: { description: 'Names the parameter and its rule.', type: 'string' } },
  },
});
