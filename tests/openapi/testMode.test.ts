/**
 * openapi.json describes test mode's mark (docs/API.md, "Test mode"): the status look-up's answer, the frame
 * look-up's records, a webhook post's `data` and a feed entry's `data` may carry `test`, only ever `true`, never
 * required (a live record's answer keeps its shape); and what the service answers for a test record fits it.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import { webhookEventOf } from '../../lib/events/webhookEvent.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { statusView } from '../../lib/status/statusView.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';
import { buildOpenApiDocument, type JsonObject } from '../../tools/openapi/buildOpenApiDocument.ts';

const built = buildOpenApiDocument();
const schemas = (built.components as JsonObject).schemas as JsonObject;
const DOC_ID = 'https://dealer-gateway.example.com/openapi.json';

const at = (...path: string[]): JsonObject =>
  path.reduce<JsonObject>((node, key) => node[key] as JsonObject, built);

/** Where each answer of a test record describes its `test` mark: the object schema that holds it. */
const holders = (): [string, JsonObject][] => [
  ['the status look-up (and the frame look-up’s records)', schemas.RecordStatus as JsonObject],
  ['a feed entry’s data', at('components', 'schemas', 'FeedEvent', 'properties', 'data')],
  [
    'a webhook post’s data',
    at(
      'webhooks',
      'recordStateChanged',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
      'properties',
      'data',
    ),
  ],
  ['the bus event', schemas.RecordStateChanged as JsonObject],
];

const validator = () => {
  const ajv = new Ajv2020.default({ strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats.default(ajv);
  ajv.addKeyword({ keyword: 'components' });
  ajv.addSchema({ $id: DOC_ID, components: { schemas } });
  return (schema: JsonObject, value: unknown) => ajv.compile(schema)(value);
};

const testCase = (): StatusRecord =>
  acceptedCase({ owner: 'example-dealer-test', test: true, status: 'delivered', attempts: 1 });

describe('openapi.json, test mode', () => {
  it.each(holders())('%s: an optional `test`, const true, described', (_where, holder) => {
    // Act
    const test = (holder.properties as JsonObject).test as JsonObject | undefined;
    // Assess
    expect(test).toMatchObject({ type: 'boolean', const: true, description: expect.stringMatching(/test/) });
    expect((holder.required as string[]) ?? []).not.toContain('test');
  });

  it('the frame look-up’s records are the status look-up’s schema', () => {
    // Act
    const records = at('components', 'schemas', 'SalesRegistrationsByFrame', 'properties', 'records');
    // Assess
    expect(records.items).toEqual({ $ref: '#/components/schemas/RecordStatus' });
  });

  it('fits what the service answers for a test record: its look-up and its webhook post', () => {
    // Prepare
    const valid = validator();
    const record = testCase();
    const event = webhookEventOf(
      stateChangeOf({ ...record, status: 'accepted' }, { state: 'delivered', attempts: 1, at: new Date() }),
    );
    const webhookSchema = at(
      'webhooks',
      'recordStateChanged',
      'post',
      'requestBody',
      'content',
      'application/json',
      'schema',
    );
    // Act
    const view = statusView(record);
    // Assess
    expect(view).toMatchObject({ test: true });
    expect(event.data).toMatchObject({ test: true });
    expect(valid({ $ref: `${DOC_ID}#/components/schemas/RecordStatus` }, view)).toBe(true);
    expect(valid(webhookSchema, event)).toBe(true);
  });

  it('refuses a `test` that is not true (the planted control)', () => {
    // Prepare
    const valid = validator();
    // Act
    const view = { ...statusView(testCase()), test: false };
    // Assess
    expect(valid({ $ref: `${DOC_ID}#/components/schemas/RecordStatus` }, view)).toBe(false);
  });
});
