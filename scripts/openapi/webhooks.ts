/**
 * The document's `webhooks` (OpenAPI 3.1): what the service posts to a client's webhook. The body's schema is
 * `schemas/events/recordStateChanged.schema.json` (converted like the request schemas); the example is built by the
 * service's own event code (lib/events), so it has exactly the fields a webhook gets.
 */

import { WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import type { StatusRecord } from '../../lib/store/types.ts';
import { markdown } from './markdown.ts';
import type { JsonObject } from './schemaConversion.ts';

/** A sale SAP refused as a second registration of its frame number, as the event code makes its event. */
const rejectedSale = (): JsonObject => {
  const sale = {
    id: '0a9b4a55bf908d736c42b1e3048e0548',
    kind: 'salesRegistration',
    owner: 'example-dealer',
    status: 'accepted',
    acceptedAt: '2026-11-23T01:18:37.644Z',
    record: { DealerId: 1234, FrameNum: 'JH2PC40A1XM000001' },
  } as unknown as StatusRecord;
  const detail = stateChangeOf(sale, {
    state: 'rejected',
    attempts: 1,
    at: new Date('2026-11-23T01:18:37.763Z'),
    error: 'Frame number JH2PC40A1XM000001 is already registered (document 49000001)',
  });
  return {
    version: '0',
    id: 'dafb9145-9db2-4638-80c9-0974ac4cbcc8',
    'detail-type': 'Record state changed',
    source: 'dealer-gateway',
    account: '123456789012',
    time: '2026-11-23T01:18:37Z',
    region: 'eu-west-1',
    resources: [],
    detail: detail as unknown as JsonObject,
  };
};

/**
 * The `webhooks` object: `recordStateChanged`, the POST a client's webhook receives.
 *
 * @example
 * buildOpenApiDocument().webhooks.recordStateChanged.post.requestBody
 */
export const webhooks = (): JsonObject => ({
  recordStateChanged: {
    post: {
      operationId: 'recordStateChanged',
      summary: "A record of the client's changed state (posted to the client's webhook)",
      description: markdown('operations/recordStateChanged.md'),
      tags: ['Status'],
      // Not the API key: the service signs its posts with the client's webhook secret.
      security: [],
      parameters: [
        {
          name: WEBHOOK_SECRET_HEADER,
          in: 'header',
          required: true,
          description: "The client's webhook secret: refuse the post when it is not the one you were given.",
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/RecordStateChanged/$defs/webhookBody' },
            example: rejectedSale(),
          },
        },
      },
      responses: {
        '200': {
          description:
            'Taken (any 2xx). Answer within 5 seconds; other answers are retried or dropped as the description says.',
        },
      },
    },
  },
});
