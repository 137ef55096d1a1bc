/**
 * `heldSince` in a waiting record's status look-up (docs/behaviour.md#outages-and-holds): the three GET operations of
 * functions/recordStatus.ts against dynalite, with holds opened and closed through the hold module's own API
 * (lib/outage/hold.ts), never by writing the hold item; and what the look-up reads for it.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import type { Downstream } from '../../lib/outage/types.ts';
import type { OutageSettings } from '../../lib/settings/settings.ts';
import { heldSinceOf } from '../../lib/status/heldSince.ts';
import { frameGet, lambdaContext, statusGet } from '../../testkit/factories/apiGateway.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { freshAws } from '../../testkit/freshAws.ts';
import { startHookedProxy } from '../../testkit/hookedProxy.ts';
import { acceptRecord, attempt } from '../records/seed.ts';

/** The service's DynamoDB calls pass this proxy, which records them and can answer an error instead. */
let dynamo: Awaited<ReturnType<typeof startHookedProxy>>;

beforeAll(async () => {
  // The function's own holds (downstreamHolds(), created on first use) read the hold at every look-up here, so a
  // test sees the hold it just opened; what the cache saves is the last test's subject.
  process.env.OUTAGE_STATE_CACHE_SECONDS = '0';
  dynamo = await startHookedProxy((await freshAws()).dynamoEndpoint);
});

afterAll(async () => {
  delete process.env.OUTAGE_STATE_CACHE_SECONDS;
  await dynamo.stop();
});

beforeEach(async () => {
  await freshAws();
  process.env.AWS_ENDPOINT_URL_DYNAMODB = dynamo.endpoint;
  dynamo.reset();
});

const SETTINGS: OutageSettings = {
  afterFailures: 5,
  probeSeconds: 30,
  failureRate: 0.5,
  rateWindow: 20,
  apiUsageShare: 0.8,
  cacheSeconds: 5,
};
const T0 = new Date('2026-11-27T03:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

/** A worker instance of the hold module: the only way these tests open and close a hold. */
const worker = () => createDownstreamHolds(SETTINGS);

/** Opens a downstream's outage hold at T0 as workers would: five transient failures of two records. */
const openOutage = async (downstream: Downstream) => {
  const holds = worker();
  const transitions = await holds.noteOutcomes(
    downstream,
    ['a', 'b', 'a', 'b', 'a'].map((recordId) => ({ recordId, kind: 'transient' as const })),
    T0,
  );
  expect(transitions).toEqual([
    { downstream, change: 'opened', reason: 'outage', heldSince: T0.toISOString() },
  ]);
  return holds;
};

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';

const lookUp = async (kind: 'salesRegistration' | 'caseRecord', id: string) => {
  const event =
    kind === 'salesRegistration'
      ? statusGet(`${SALES}/${id}`, { id })
      : statusGet(`${CASE}/${id}`, { CrmId: id });
  const answer = await recordStatus(event, lambdaContext());
  return { status: answer.statusCode, body: JSON.parse(answer.body) };
};

/** The reads of a hold item (pk `hold#…`) among the recorded DynamoDB calls. */
const holdReads = () =>
  dynamo.requests.filter((r) => JSON.stringify(r.body).includes('"hold#')).map((r) => r.operation);

describe('a record waiting out an outage shows heldSince', () => {
  it('GET by id: while its downstream is held and it is accepted, with the hold’s start; one GetItem of the hold', async () => {
    // Prepare
    const sale = await acceptRecord('salesRegistration');
    await openOutage('erp');
    dynamo.reset();
    // Act
    const answer = await lookUp('salesRegistration', sale.id);
    // Assess
    expect(answer).toEqual({
      status: 200,
      body: {
        id: sale.id,
        status: 'accepted',
        attempts: 0,
        acceptedAt: sale.acceptedAt,
        updatedAt: sale.updatedAt,
        heldSince: T0.toISOString(),
      },
    });
    expect(holdReads()).toEqual(['GetItem']);
  });

  it('GET a case while Salesforce’s allowance holds the CRM; a sale then shows nothing (its ERP is not held)', async () => {
    // Prepare
    const crmCase = await acceptRecord('caseRecord');
    const sale = await acceptRecord('salesRegistration');
    await worker().noteApiUsage(4_100, 5_000, T0);
    // Act
    const caseAnswer = await lookUp('caseRecord', crmCase.id);
    const saleAnswer = await lookUp('salesRegistration', sale.id);
    // Assess
    expect(caseAnswer.body).toMatchObject({
      id: crmCase.id,
      status: 'accepted',
      heldSince: T0.toISOString(),
    });
    expect(saleAnswer.status).toBe(200);
    expect(saleAnswer.body).not.toHaveProperty('heldSince');
  });

  it('no longer once the hold has closed (a probe got an answer)', async () => {
    // Prepare
    const sale = await acceptRecord('salesRegistration');
    const holds = await openOutage('erp');
    const held = await lookUp('salesRegistration', sale.id);
    // Act
    const closed = await holds.noteOutcome('erp', { recordId: 'c', kind: 'delivered', probe: true }, at(31));
    const after = await lookUp('salesRegistration', sale.id);
    // Assess
    expect(held.body.heldSince).toBe(T0.toISOString());
    expect(closed).toMatchObject({ change: 'closed', heldSeconds: 31 });
    expect(after.status).toBe(200);
    expect(after.body).not.toHaveProperty('heldSince');
  });

  it('never on a settled record, whose look-up does not read the hold', async () => {
    // Prepare
    const delivered = await attempt(await acceptRecord('salesRegistration'), {
      status: 'delivered',
      downstreamId: '0090012345',
      at: at(-60).toISOString(),
    });
    await openOutage('erp');
    dynamo.reset();
    // Act
    const answer = await lookUp('salesRegistration', delivered.id);
    // Assess
    expect(answer.body).toMatchObject({ id: delivered.id, status: 'delivered', downstreamId: '0090012345' });
    expect(answer.body).not.toHaveProperty('heldSince');
    expect(holdReads()).toEqual([]);
  });

  it('GET ?FrameNum=: on the accepted records of the list only, with one read of the hold for the whole list', async () => {
    // Prepare: two accepted sales and a delivered one of the same frame, SAP held.
    const frame = uniqueFrame();
    const older = await acceptRecord('salesRegistration', { frame, at: '2026-11-26T08:00:00.000Z' });
    const delivered = await attempt(
      await acceptRecord('salesRegistration', { frame, at: '2026-11-26T09:00:00.000Z' }),
      { status: 'delivered', downstreamId: '0090012345', at: '2026-11-26T09:00:02.000Z' },
    );
    const newer = await acceptRecord('salesRegistration', { frame, at: '2026-11-26T10:00:00.000Z' });
    await openOutage('erp');
    dynamo.reset();
    // Act
    const answer = await recordStatus(frameGet(frame), lambdaContext());
    const { records } = JSON.parse(answer.body) as { records: Record<string, unknown>[] };
    // Assess
    expect(answer.statusCode).toBe(200);
    expect(records.map((r) => [r.id, r.heldSince])).toEqual([
      [newer.id, T0.toISOString()],
      [delivered.id, undefined],
      [older.id, T0.toISOString()],
    ]);
    expect(holdReads()).toEqual(['GetItem']);
  });

  it('answers without it, still 200, when the hold cannot be read', async () => {
    // Prepare
    const sale = await acceptRecord('salesRegistration');
    await openOutage('erp');
    // The look-up's second GetItem is the hold's: DynamoDB refuses it (not retried by the client).
    dynamo.before('GetItem', () => ({ status: 400, type: 'AccessDeniedException' }), 1);
    // Act
    const answer = await lookUp('salesRegistration', sale.id);
    // Assess
    expect(dynamo.pending()).toEqual([]);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: sale.id, status: 'accepted' });
    expect(answer.body).not.toHaveProperty('heldSince');
  });
});

describe('what heldSince costs', () => {
  it('an instance reads the hold once per OUTAGE_STATE_CACHE_SECONDS, not at every look-up', async () => {
    // Prepare: an instance of the status function's holds with the default 5 s cache.
    await openOutage('crm');
    const statusHolds = worker();
    const waiting = [{ status: 'accepted' as const }];
    dynamo.reset();
    // Act
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await heldSinceOf('caseRecord', waiting, statusHolds));
    // Assess
    expect(answers).toEqual(Array(10).fill(T0.toISOString()));
    expect(holdReads()).toEqual(['GetItem']);
  });
});
