/**
 * schemas/events/recordStateChanged.schema.json, the published shape of a `Record state changed` event: the events
 * lib/events builds validate against it, nothing more than the schema names can appear (no personal data), and a
 * queued event (the whole EventBridge envelope) validates against its `busEvent` definition.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import { stateChangeOf } from '../../lib/events/stateChange.ts';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import schema from '../../schemas/events/recordStateChanged.schema.json' with { type: 'json' };
import { personalValues, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { acceptedCase } from '../../testkit/factories/statusRecords.ts';

const ajv = new Ajv.default({ allErrors: true, strict: true });
addFormats.default(ajv);
const validate = ajv.compile(schema);
const validateBody = ajv.compile({ $ref: `${schema.$id}#/definitions/busEvent` });

const at = new Date('2026-11-22T08:03:12.345Z');

/** An accepted sales registration's status record (the normalised record holds the buyer's personal data). */
const acceptedSale = (): StatusRecord =>
  acceptedCase({
    kind: 'salesRegistration',
    statusKey: 'salesRegistration#accepted',
    owner: 'example-dealer',
    record: {
      ...salesRegistrationInput({ FrameNum: uniqueFrame() }),
      DealerId: 1234,
    } as StatusRecord['record'],
  });

/** The events of every change the service publishes, built by lib/events. */
const builtEvents = (): [string, RecordStateChanged][] => [
  [
    'a sale rejected by SAP',
    stateChangeOf(acceptedSale(), {
      state: 'rejected',
      attempts: 1,
      at,
      error: 'Frame number already registered',
    }),
  ],
  [
    'a sale delivered',
    stateChangeOf(acceptedSale(), { state: 'delivered', attempts: 2, at, downstreamId: '0090001234' }),
  ],
  [
    'a case delivered',
    stateChangeOf(acceptedCase(), { state: 'delivered', attempts: 1, at, downstreamId: '500Xx000001AbCd' }),
  ],
  [
    'a case failed',
    stateChangeOf(acceptedCase(), { state: 'failed', attempts: 5, at, error: 'HTTP 503 from Salesforce' }),
  ],
  [
    'a failed case redriven',
    stateChangeOf(acceptedCase({ status: 'failed', attempts: 5 }), { state: 'accepted', attempts: 5, at }),
  ],
  [
    'a test client’s case refused by the simulator',
    stateChangeOf(acceptedCase({ owner: 'example-dealer-test', test: true }), {
      state: 'rejected',
      attempts: 1,
      at,
      error: 'FIELD_CUSTOM_VALIDATION_EXCEPTION: Case refused by the Salesforce simulator',
    }),
  ],
  [
    'a browser-form case delivered',
    stateChangeOf(acceptedCase({ owner: 'browser-form:https://www.example.com' }), {
      state: 'delivered',
      attempts: 1,
      at,
      downstreamId: '500Xx000001AbCe',
    }),
  ],
];

describe('the Record state changed schema', () => {
  it.each(builtEvents())('accepts the event lib/events builds for %s', (_label, event) => {
    // Act
    const valid = validate(event);
    // Assess
    expect(validate.errors ?? [], JSON.stringify(event)).toEqual([]);
    expect(valid).toBe(true);
  });

  it.each(builtEvents())(
    'carries none of the personal values of the record in the event for %s',
    (_label, event) => {
      // Act
      const text = JSON.stringify(event);
      // Assess
      expect(personalValues.filter((value) => text.includes(value))).toEqual([]);
    },
  );

  it('names exactly the fields of RecordStateChanged (a sale with every optional field has all of them)', () => {
    // Prepare
    const full: Required<RecordStateChanged> = {
      ...stateChangeOf(
        {
          ...acceptedSale(),
          test: true,
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
        { state: 'rejected', attempts: 1, at, error: 'refused' },
      ),
      downstreamId: 'x',
    } as Required<RecordStateChanged>;
    // Assess
    expect(Object.keys(full).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(validate(full)).toBe(true);
  });

  it.each([
    ['a personal field', { Name: 'Ada Buyer' }, 'additionalProperties'],
    ['an email', { email: 'ada@example.com' }, 'additionalProperties'],
    ['an unknown state', { state: 'lost' }, 'enum'],
    ['a fractional attempt count', { attempts: 1.5 }, 'type'],
    ['a time that is not ISO 8601', { at: '22/11/2026 08:03' }, 'format'],
    ['a malformed record id', { recordId: 'X1' }, 'pattern'],
    ['a test mark that is not true', { test: false }, 'const'],
  ])('refuses an event with %s', (_label, change, keyword) => {
    // Prepare
    const [[, event]] = builtEvents();
    // Act
    const valid = validate({ ...event, ...change });
    // Assess
    expect(valid).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(keyword);
  });

  it.each(schema.required)('refuses an event without %s', (field) => {
    const [[, event]] = builtEvents();
    const incomplete: Record<string, unknown> = { ...event };
    delete incomplete[field];
    expect(validate(incomplete)).toBe(false);
  });

  it("describes the queued event: the EventBridge envelope as the bus's rule queues it, the event as its detail", () => {
    // Prepare
    const [[, detail]] = builtEvents();
    const body = {
      version: '0',
      id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
      'detail-type': RECORD_STATE_CHANGED,
      source: EVENT_SOURCE,
      account: '123456789012',
      time: '2026-11-22T08:03:13Z',
      region: 'eu-west-1',
      resources: [],
      detail,
    };
    // Act / Assess
    expect(validateBody(body), JSON.stringify(validateBody.errors)).toBe(true);
    expect(validateBody({ ...body, detail: { ...detail, surname: 'Buyer' } })).toBe(false);
    expect(validateBody({ ...body, source: 'someone-else' })).toBe(false);
  });
});
