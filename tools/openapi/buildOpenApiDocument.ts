/**
 * Builds the OpenAPI 3.1 document of the public operations from the JSON schemas in `schemas/` (never a copy
 * by hand), the service's validators and its answer shapes. `scripts/build-openapi.ts` writes it to
 * `openapi.json`, which `functions/openApi.ts` serves as it is; `tests/openapi` fails when the committed file
 * drifts from what this module builds. Build tooling: nothing at run time imports it.
 *
 * - `schemaConversion.ts`: `schemas/` (draft-07) to OpenAPI 3.1 Schema Objects;
 * - `components.ts`: request and answer schemas, the Idempotency-Key parameter, Retry-After, the API key;
 * - `intakeOperations.ts`, `statusOperation.ts`, `feedOperation.ts`: the operations; `responses.ts`: the answers they share;
 * - `feedSchemas.ts`: the event feed's answers;
 * - `webhooks.ts`: what a client's webhook receives (the record events);
 * - `examples.ts`: examples checked by the real validators and built by the real answer shapes;
 * - `description.md`, `operations/*.md`: the prose, read by `markdown.ts`.
 */

import { caseShape, salesRegistrationShape, statusShape } from '../../lib/http/shapes.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { components } from './components.ts';
import { bodyOf, example } from './examples.ts';
import { feedOperation } from './feedOperation.ts';
import { feedSchemas } from './feedSchemas.ts';
import { caseOperation, salesRegistrationOperation } from './intakeOperations.ts';
import { markdown } from './markdown.ts';
import { withRefusal } from './responses.ts';
import type { JsonObject } from './schemaConversion.ts';
import { frameOperation, statusOperation } from './statusOperation.ts';
import { webhooks } from './webhooks.ts';

export type { Json, JsonObject } from './schemaConversion.ts';

/** The components with the event feed's schemas among the answers' schemas. */
const withFeedSchemas = (all: JsonObject): JsonObject => ({
  ...all,
  schemas: { ...(all.schemas as JsonObject), ...feedSchemas() },
});

/**
 * The OpenAPI 3.1.0 document of the public operations, built from `schemas/` and the contract's answers.
 *
 * @example
 * writeFileSync('openapi.json', `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
 */
export const buildOpenApiDocument = (): JsonObject => ({
  openapi: '3.1.0',
  info: {
    title: 'Dealer gateway',
    version: packageJson.version,
    summary:
      'Dealer sales registrations and web-form cases, validated, queued and delivered to the ERP and CRM.',
    description: markdown('description.md'),
  },
  servers: [
    // Served under `npm start`, the URL it listens on instead (functions/openApi.ts).
    {
      url: 'http://localhost:3000',
      description: 'Local service (`npm start`; PORT overrides 3000, and the served document names the port)',
    },
  ],
  tags: [
    { name: 'Sales registrations', description: 'Vehicle sales registered with the back-office ERP.' },
    { name: 'Cases', description: 'Customer cases (enquiries) created in the CRM.' },
    { name: 'Status', description: 'Where an accepted record stands in its delivery.' },
  ],
  // Every operation needs a client's API key in x-api-key. Not described here: POST /crm/case also lets in
  // key-less posts from browser pages of allowed origins when config/clients.json enables browser forms (off by
  // default; docs/operations.md, "Browser forms (off by default)").
  security: [{ ApiKey: [] }],
  paths: {
    '/erp/sales_registration': {
      post: withRefusal(salesRegistrationOperation(), 'SalesRegistrationRefused', salesRegistrationShape, {
        foreignDealer: example(
          'A sale for a dealer the client is not bound to',
          bodyOf(
            salesRegistrationShape.refused(
              403,
              '[1].DealerId is not a dealer this client may register sales for',
            ),
          ),
        ),
      }),
      get: withRefusal(frameOperation(), 'SalesRegistrationRefused', salesRegistrationShape),
    },
    '/erp/sales_registration/{id}': {
      get: withRefusal(statusOperation('salesRegistration'), 'NotFound', statusShape),
    },
    '/crm/case': { post: withRefusal(caseOperation(), 'CaseRefused', caseShape) },
    '/crm/case/{CrmId}': { get: withRefusal(statusOperation('caseRecord'), 'NotFound', statusShape) },
    '/events': { get: withRefusal(feedOperation(), 'FeedRefused', statusShape) },
  },
  webhooks: webhooks(),
  components: withFeedSchemas(components()),
});
