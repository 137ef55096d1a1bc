/**
 * The document's `webhooks` (OpenAPI 3.1): what the service posts to a client's webhook, signed per Standard
 * Webhooks (lib/webhooks). The example is built by the service's own event code (lib/events: webhookEventOf), so it
 * has exactly the fields a webhook gets.
 */

import { stateChangeOf } from '../../lib/events/stateChange.ts';
import { webhookEventOf, webhookIdOf } from '../../lib/events/webhookEvent.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { testMark } from './components.ts';
import { markdown } from './markdown.ts';
import type { JsonObject } from './schemaConversion.ts';

/** A sale SAP refused as a second registration of its frame number, as the event code makes its event. */
const rejectedSale = () => {
  const sale = {
    id: '0a9b4a55bf908d736c42b1e3048e0548',
    kind: 'salesRegistration',
    owner: 'example-dealer',
    status: 'accepted',
    acceptedAt: '2026-11-23T01:18:37.644Z',
    eventSequence: 1,
    record: { DealerId: 1234, FrameNum: 'JH2PC40A1XM000001' },
  } as unknown as StatusRecord;
  return stateChangeOf(sale, {
    state: 'rejected',
    attempts: 1,
    at: new Date('2026-11-23T01:18:37.763Z'),
    error: 'Frame number JH2PC40A1XM000001 is already registered (document 49000001)',
  });
};

const STATES = ['accepted', 'delivered', 'rejected', 'failed'];

/** The body of a webhook: the contract's event (section 5), no personal data. */
const webhookEventSchema: JsonObject = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: { type: 'string', enum: STATES.map((state) => `record.${state}`) },
    timestamp: { type: 'string', format: 'date-time', description: 'When the state changed.' },
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['recordId', 'kind', 'state', 'previousState', 'attempts', 'sequence'],
      properties: {
        recordId: { type: 'string' },
        kind: { type: 'string', enum: ['salesRegistration', 'caseRecord'] },
        state: { type: 'string', enum: STATES },
        previousState: { type: 'string', enum: ['accepted', ...STATES.slice(1)] },
        attempts: { type: 'integer', minimum: 0 },
        sequence: {
          type: 'integer',
          minimum: 0,
          description: "1, 2, ... per record: the highest one seen is the record's latest state.",
        },
        downstreamId: { type: 'string' },
        error: { type: 'string', description: "The downstream's refusal, without personal data." },
        FrameNum: { type: 'string' },
        DealerId: { type: 'integer' },
        test: testMark('event'),
      },
    },
  },
};

/** One of the Standard Webhooks headers. */
const header = (name: string, description: string, example: string): JsonObject => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

/**
 * The `webhooks` object: `recordStateChanged`, the POST a client's webhook receives.
 *
 * @example
 * buildOpenApiDocument().webhooks.recordStateChanged.post.requestBody
 */
export const webhooks = (): JsonObject => {
  const event = rejectedSale();
  return {
    recordStateChanged: {
      post: {
        operationId: 'recordStateChanged',
        summary: "A record of the client's changed state (posted to the client's webhook)",
        description: markdown('operations/recordStateChanged.md'),
        tags: ['Status'],
        // Not the API key: the service signs its posts with the client's webhook secret (Standard Webhooks).
        security: [],
        parameters: [
          header(
            'webhook-id',
            "The event's id: the same on every try of it (drop the copies you have seen).",
            webhookIdOf(event),
          ),
          header('webhook-timestamp', 'Unix seconds of this try (refuse one far from now).', '1795000717'),
          header(
            'webhook-signature',
            'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>"> with your whsec_ secret; two, space-separated, while a secret is being rotated.',
            'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          ),
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: webhookEventSchema,
              example: webhookEventOf(event) as unknown as JsonObject,
            },
          },
        },
        responses: {
          '200': {
            description:
              'Taken (any 2xx). Answer within 5 seconds; 410 Gone turns the webhook off; anything else is retried for 3 days.',
          },
        },
      },
    },
  };
};
