/**
 * No personal value a record carried survives anywhere once its time has come: a distinctive value is planted in
 * every field of each kind (every field of the schemas and of the classification, and one field nobody classed), the
 * SAP and Salesforce sandboxes echo each value in the forms a person recognises, the worker's own writes store those
 * texts (`error`, `history`, the event outbox, the event feed), the purge runs against dynalite (tables and indexes
 * from serverless.yml), and the whole item, each index's Query results (the feed's included), the events built from
 * the item and the captured output are searched for every planted personal value.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { eventOf } from '../../lib/events/stateChange.ts';
import { putFeedEntries } from '../../lib/feed/feedEntries.ts';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { fieldClass, type PersonalValueKind } from '../../lib/privacy/fieldClassification.ts';
import { messageBody } from '../../lib/queue/sendRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { purgePersonalData } from '../../lib/retention/purge.ts';
import { claimRecord, recordAttempt } from '../../lib/store/statusUpdates.ts';
import type { CaseRecord, RecordKind, SalesRegistration } from '../../lib/types.ts';
import { localClientConfig } from '../../local/aws.ts';
import { deliverRecord } from '../../testkit/deliverRecord.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';
import { type CrmFixture, startCrm } from '../crm/fixtures.ts';
import { type ErpFixture, startErp } from '../erp/fixtures.ts';

/**
 * The reviewed decision of what is not personal, written out here on purpose: the test's oracle must not come from
 * the classification it checks, or a personal field classed `kept` by mistake would pass unnoticed. Every other
 * field, a new one included, is expected to be personal.
 */
const REVIEWED_KEPT: Record<RecordKind, readonly string[]> = {
  salesRegistration: ['DealerId', 'FrameNum', 'Model', 'SaleDate', 'CommPriv', 'MoreInfo', 'AllowSharing'],
  caseRecord: ['privacyConsent', 'subscribeToBrand', 'ownBrand', 'siteName', 'origin', 'frameNo'],
};

/** A field no schema or classification names, as a record stored by an older or newer version might carry. */
const UNCLASSIFIED = 'legacyNickname';

const schemaFields = (file: string): string[] => {
  const schema = JSON.parse(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8'));
  return Object.keys((schema.items ?? schema).properties);
};

/** Every field of a kind: the schema's (vin-frame is folded into frameNo) and one nobody classed. */
const FIELDS: Record<RecordKind, string[]> = {
  salesRegistration: [...schemaFields('salesRegistration.schema.json'), UNCLASSIFIED],
  caseRecord: [...schemaFields('caseRecord.schema.json').filter((f) => f !== 'vin-frame'), UNCLASSIFIED],
};

interface Planted {
  field: string;
  /** The kind the classification gives the field's value (free text for a field it does not name). */
  kind: PersonalValueKind | 'kept';
  value: string | number | boolean;
  personal: boolean;
}

/** Two letters per field, so that each field's value is told apart from every other's. */
const tagOf = (index: number) =>
  `${String.fromCharCode(97 + (index % 26))}${String.fromCharCode(97 + Math.floor(index / 26))}`;

/** A distinctive value of the kind the classification gives the field. */
const plantedValue = (kind: Planted['kind'], field: string, index: number): Planted['value'] => {
  const tag = tagOf(index);
  switch (kind) {
    case 'name':
      return `Zorb${tag}ula Quix${tag}amor`;
    case 'email':
      return `planted.${tag}@leakcheck.example`;
    case 'phone':
      return `+61 4${57_300_000 + index * 1_013}`;
    case 'date':
      return `19${31 + index}-0${1 + (index % 9)}-1${index % 9}`;
    case 'code':
      // Sex and title take short codes; a test of a code must use a real one.
      return field === 'Sex' ? 'F' : 'Dr';
    case 'text':
      return `Planted ${tag} note for Yrm${tag}elda at loan ${70_000 + index}`;
    default:
      // Kept: as distinctive, with the type the field has.
      if (field === 'DealerId') return 4711;
      if (['privacyConsent', 'subscribeToBrand', 'ownBrand'].includes(field)) return true;
      return `Kept${tag}Value`;
  }
};

const plantsOf = (kind: RecordKind): Planted[] =>
  FIELDS[kind].map((field, index) => {
    const fieldKind = fieldClass(kind, field);
    return {
      field,
      kind: fieldKind,
      value: plantedValue(fieldKind, field, index + (kind === 'caseRecord' ? 40 : 0)),
      personal: !REVIEWED_KEPT[kind].includes(field),
    };
  });

const recordOf = (plants: Planted[]) => Object.fromEntries(plants.map((p) => [p.field, p.value]));

/** The forms a downstream echoes a value in: as is, upper case, lower case, spaced out, a name's parts alone. */
const echoOf = (plant: Planted): string => {
  const value = String(plant.value);
  if (plant.kind === 'code') return `Property '${plant.field}' value ${value} (${value}) is not allowed`;
  const forms = [value, value.toUpperCase(), value.toLowerCase().replace(/ /g, '   ')];
  if (plant.kind === 'name') forms.push(...value.split(' ').map((part) => `${part} alone`));
  if (plant.kind === 'date') forms.push(value.split('-').reverse().join('.'));
  if (plant.kind === 'phone') forms.push(`0${value.replace(/\D/g, '').slice(2)}`);
  return `Property '${plant.field}' refused: ${forms.join(' / ')}`;
};

/**
 * Where a person would recognise a planted personal value in a text: any case, whitespace collapsed, a name's part
 * alone, a phone number by its digits, a date in day-first form; a short code (under 3 characters) as a whole word
 * in its own or upper case (the redaction's documented rule). Independent of the redaction's own code.
 */
const recognised = (text: string, plant: Planted): boolean => {
  const value = String(plant.value);
  if (plant.kind === 'code' && value.length < 3) {
    return new RegExp(`(?<![\\p{L}\\p{N}])(?:${value}|${value.toUpperCase()})(?![\\p{L}\\p{N}])`, 'u').test(
      text,
    );
  }
  const flat = text.toLowerCase().replace(/\s+/g, ' ');
  const needles = [value.toLowerCase().replace(/\s+/g, ' ')];
  if (plant.kind === 'name') needles.push(...value.toLowerCase().split(' '));
  if (plant.kind === 'date') needles.push(value.split('-').reverse().join('.'));
  if (needles.some((needle) => flat.includes(needle))) return true;
  if (plant.kind === 'phone') return text.replace(/\D/g, '').includes(value.replace(/\D/g, '').slice(2));
  return false;
};

/** The planted personal values a text shows, by field. */
const leaksIn = (text: string, plants: Planted[]): string[] =>
  plants.filter((plant) => plant.personal && recognised(text, plant)).map((plant) => plant.field);

let aws: Awaited<ReturnType<typeof freshAws>>;
let raw: DynamoDBClient;
let erp: ErpFixture;
let crm: CrmFixture;
/** The event bus: every PutEvents body the worker sent (what EventBridge, webhooks and their dead letters get). */
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;
/** Everything written to stdout and stderr while a test runs. */
let output: string[];

beforeAll(async () => {
  [erp, crm, bus] = await Promise.all([startErp(), startCrm(), startEventBridgeRecorder()]);
});

afterAll(async () => {
  await Promise.all([erp.sap.stop(), crm.sf.stop(), bus.stop()]);
});

beforeEach(async () => {
  aws = await freshAws();
  raw = new DynamoDBClient(localClientConfig(aws.dynamoEndpoint));
  // The worker reaches the sandboxes and the bus through its settings, as deployed.
  Object.assign(process.env, {
    ERP_BASE_URL: erp.config.baseUrl,
    ERP_USERNAME: erp.config.username,
    ERP_PASSWORD: erp.config.password,
    CRM_BASE_URL: crm.config.baseUrl,
    CRM_CLIENT_ID: crm.config.clientId,
    CRM_CLIENT_SECRET: crm.config.clientSecret,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-privacy',
  });
  resetDownstreamClients();
  bus.reset();
  output = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation(((chunk: unknown, ...rest: never[]) => {
      output.push(String(chunk));
      return write(chunk as string, ...rest);
    }) as typeof stream.write);
  }
});

afterEach(() => {
  vi.restoreAllMocks();
  raw.destroy();
});

const T = new Date('2026-01-10T12:00:00.000Z');
const DAY = 86_400_000;
const OWNER: Record<RecordKind, string> = {
  salesRegistration: 'example-dealer',
  caseRecord: 'example-web-forms',
};

/** The record stored as intake stores it, accepted a minute before T, with a frame number of its own. */
const accept = async (kind: RecordKind, plants: Planted[]): Promise<StatusRecord> => {
  const record = recordOf(plants);
  record[kind === 'salesRegistration' ? 'FrameNum' : 'frameNo'] = uniqueFrame('PII');
  const status = newStatusRecord(
    `${kind}-${uniqueFrame('ID')}`.toLowerCase(),
    { kind, records: [record as unknown as SalesRegistration], requestId: 'privacy', owner: OWNER[kind] },
    record as unknown as SalesRegistration,
    new Date(T.getTime() - 60_000),
  );
  await seedStatusRecords([status]);
  return status;
};

/** What the downstream makes of one echo: the adapter's error text for an answer 400 carrying it. */
const downstreamError = async (status: StatusRecord, message: string): Promise<string> => {
  if (status.kind === 'salesRegistration') {
    erp.sap.inject({ status: 400, message });
    const outcome = await erp.erp.deliverSalesRegistration(status.record as SalesRegistration, status.id);
    return outcome.kind === 'delivered' ? '' : outcome.error;
  }
  crm.sf.inject({
    status: 400,
    errors: [{ message, errorCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', fields: [] }],
  });
  const outcome = await crm.crm.upsertCase(status.record as CaseRecord, status.id);
  return outcome.kind === 'delivered' ? '' : outcome.error;
};

/**
 * The worker's delivery of the record (deliverRecord, with its logger and event publishing) while the downstream
 * refuses it with `message`: the record is rejected, its event published to the bus.
 */
const deliverRefused = async (status: StatusRecord, message: string): Promise<void> => {
  if (status.kind === 'salesRegistration') erp.sap.inject({ status: 400, message });
  else
    crm.sf.inject({
      status: 400,
      errors: [{ message, errorCode: 'FIELD_CUSTOM_VALIDATION_EXCEPTION', fields: [] }],
    });
  const body = messageBody({
    id: status.id,
    kind: status.kind,
    requestId: status.requestId,
  });
  const sqsRecord = {
    messageId: 'm',
    receiptHandle: 'r',
    body,
    attributes: { ApproximateReceiveCount: '1' },
  };
  await deliverRecord(sqsRecord as unknown as SQSRecord, {
    settings: { maxAttempts: 3, retryBaseSeconds: 10, leaseSeconds: 90 },
    log: logger,
    tally: new OutcomeTally(),
    now: () => new Date(T.getTime() + 3_600_000),
  });
};

/**
 * One attempt per personal field through the worker's own writes, each storing `errorOf(echo)`: all but the last
 * leave the record accepted (history), the last rejects it unless told not to (its `error`, and an unpublished
 * event in the outbox).
 */
const attemptEach = async (
  status: StatusRecord,
  plants: Planted[],
  errorOf: (echo: string) => Promise<string>,
  { settleLast = true } = {},
) => {
  const personal = plants.filter((plant) => plant.personal);
  for (const [index, plant] of personal.entries()) {
    const at = new Date(T.getTime() + index * 1000);
    const leaseUntil = new Date(at.getTime() + 90_000).toISOString();
    const claim = await claimRecord(status.id, { now: at, leaseUntil });
    if (!claim.claimed) throw new Error(`record ${status.id} not claimed`);
    const last = settleLast && index === personal.length - 1;
    const written = await recordAttempt(
      claim.claimed,
      { status: last ? 'rejected' : 'accepted', attempts: 1, at, error: await errorOf(echoOf(plant)) },
      leaseUntil,
    );
    if (!written) throw new Error(`attempt on ${status.id} not written`);
  }
};

/** Every place the store holds something of the record: the item, and what each index answers for it. */
const storedTexts = async (status: StatusRecord) => {
  const TableName = aws.resources.tables.RecordsTable.name;
  const item = (await raw.send(new GetItemCommand({ TableName, Key: { pk: { S: status.id } } }))).Item ?? {};
  const record = unmarshall(item) as StatusRecord;
  const query = async (IndexName: string, key: string, value: NativeAttributeValue) => {
    const out = await raw.send(
      new QueryCommand({
        TableName,
        IndexName,
        KeyConditionExpression: `${key} = :key`,
        ExpressionAttributeValues: { ':key': { S: String(value) } },
      }),
    );
    return JSON.stringify((out.Items ?? []).map((entry) => unmarshall(entry)));
  };
  const indexes: Record<string, string> = { status: await query('status', 'statusKey', record.statusKey) };
  if (record.frameKey) indexes.frame = await query('frame', 'frameKey', record.frameKey);
  // The record's event feed entries (lib/feed), as GET /events reads them: the owner's partition of the feed index.
  indexes.feed = await query('feed', 'feedClient', record.owner);
  const events = (record.pendingEvents ?? []).map((pending) => eventOf(record, pending));
  return { record, item: JSON.stringify(record), indexes, events: JSON.stringify(events) };
};

/** The planted personal values found in each place, by place; empty places left out. */
const leaksEverywhere = async (status: StatusRecord, plants: Planted[]) => {
  const { item, indexes, events } = await storedTexts(status);
  const places: Record<string, string> = {
    item,
    ...Object.fromEntries(Object.entries(indexes).map(([name, text]) => [`index ${name}`, text])),
    events,
    bus: bus.bodies.join('\n'),
    output: output.join(''),
  };
  return Object.fromEntries(
    Object.entries(places)
      .map(([place, text]) => [place, leaksIn(text, plants)] as const)
      .filter(([, fields]) => fields.length > 0),
  );
};

const KINDS: RecordKind[] = ['salesRegistration', 'caseRecord'];

describe('personal data after the purge', () => {
  it('plants a value in every field of both kinds, the unclassified one included', () => {
    for (const kind of KINDS) {
      const plants = plantsOf(kind);
      expect(plants.map((plant) => plant.field)).toContain(UNCLASSIFIED);
      // Each planted value is told apart from every other (a find names one field).
      for (const plant of plants.filter((p) => p.personal && p.kind !== 'code')) {
        expect(plants.filter((other) => other.personal && recognised(String(other.value), plant))).toEqual([
          plant,
        ]);
      }
    }
  });

  it.each(KINDS)(
    '%s: the downstream echoes every personal value; none is stored, indexed, in an event or in the output, and none after the purge',
    async (kind) => {
      // Prepare: a record with a planted value in every field, one attempt per personal field, each echoed back.
      const plants = plantsOf(kind);
      const personal = plants.filter((plant) => plant.personal);
      const status = await accept(kind, plants);
      const errors: string[] = [];
      // Act: the adapter's answer to each echo stored by the worker's writes; then the worker itself delivers, the
      // downstream refusing with every personal value at once, and publishes the event.
      await attemptEach(
        status,
        plants,
        async (echo) => {
          const error = await downstreamError(status, echo);
          errors.push(error);
          return error;
        },
        { settleLast: false },
      );
      await deliverRefused(
        status,
        `Property values refused: ${personal.map((p) => String(p.value)).join(', ')}`,
      );
      const { record: settled } = await storedTexts(status);
      const { record: _record, ...storedBesidesRecord } = settled;
      const beforePurge = leaksIn(JSON.stringify(storedBesidesRecord), plants);
      const run = await purgePersonalData({ now: new Date(T.getTime() + 31 * DAY) });
      // Assess: the adapters let no personal value into a text, and the texts still say what the downstream said.
      expect(errors.every((error) => error.includes("Property '"))).toBe(true);
      expect(leaksIn(errors.join('\n'), plants)).toEqual([]);
      expect(settled).toMatchObject({
        status: 'rejected',
        error: expect.stringContaining('Property values refused'),
      });
      expect(settled.history).toHaveLength(personal.length + 1);
      expect(bus.details()).toEqual([expect.objectContaining({ recordId: status.id, state: 'rejected' })]);
      expect(beforePurge).toEqual([]);
      expect(run.purged[kind]).toBe(1);
      expect(await leaksEverywhere(status, plants)).toEqual({});
    },
  );

  it.each(KINDS)(
    '%s: texts stored verbatim before redaction knew a field lose every personal value in the purge: error, history, outbox, indexes, feed',
    async (kind) => {
      // Prepare: the downstream's echoes stored as they came (as before this classification), then settled.
      const plants = plantsOf(kind);
      const status = await accept(kind, plants);
      await attemptEach(status, plants, async (echo) => echo);
      // Its event reached the feed, and the publisher died before the bus (the outbox keeps it too).
      const { record: settled } = await storedTexts(status);
      await putFeedEntries((settled.pendingEvents ?? []).map((pending) => eventOf(settled, pending)));
      const leaksBefore = await leaksEverywhere(status, plants);
      // Act
      const run = await purgePersonalData({ now: new Date(T.getTime() + 31 * DAY) });
      const { record: purged } = await storedTexts(status);
      // Assess: before, every personal field was found in the item, in the index and in the event (the search works).
      const personalFields = plants.filter((plant) => plant.personal).map((plant) => plant.field);
      expect(leaksBefore.item).toEqual(personalFields);
      expect(leaksBefore['index status']).toEqual([personalFields.at(-1)]);
      expect(leaksBefore.events).toEqual([personalFields.at(-1)]);
      expect(leaksBefore['index feed']).toEqual([personalFields.at(-1)]);
      // After: nowhere; what is kept stays.
      expect(run.purged[kind]).toBe(1);
      expect(await leaksEverywhere(status, plants)).toEqual({});
      const kept = plants.filter(
        (plant) => !plant.personal && !['FrameNum', 'frameNo'].includes(plant.field),
      );
      expect(purged.record).toMatchObject(
        Object.fromEntries(kept.map((plant) => [plant.field, plant.value])),
      );
      expect(purged.history?.every((step) => step.error?.startsWith("Property '"))).toBe(true);
      expect(purged.pendingEvents?.[0]?.error).toMatch(/^Property '.*\[redacted\]/);
    },
  );
});
