import { beforeAll, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as recordStatus } from '../../functions/recordStatus.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import { salesRecordsByFrame } from '../../lib/store/frameRecords.ts';
import type { SalesRegistration } from '../../lib/types.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import { frameGet, jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';

beforeAll(async () => {
  await isolatedAws();
});

/** A sales record as intake stores it (with its frameKey), accepted at `acceptedAt`, then changed as given. */
const storedSale = (
  frameNum: string,
  acceptedAt: string,
  changes: Partial<StatusRecord> = {},
  owner = 'example-dealer',
): StatusRecord => {
  const record = salesRegistrationInput({ FrameNum: frameNum }) as unknown as SalesRegistration;
  const id = crypto.randomUUID().replaceAll('-', '');
  const status = newStatusRecord(
    id,
    { kind: 'salesRegistration', records: [record], requestId: 'seeded', owner },
    record,
    new Date(acceptedAt),
  );
  return { ...status, ...changes };
};

const lookUp = async (...args: Parameters<typeof frameGet>) => {
  const answer = await recordStatus(frameGet(...args), lambdaContext());
  return { status: answer.statusCode, body: JSON.parse(answer.body), headers: answer.headers };
};

describe('GET /erp/sales_registration?FrameNum=', () => {
  it("lists the caller's sales records for the frame, newest first, with status, attempts, times, downstreamId and error", async () => {
    // Prepare: two settled records of earlier days, and one accepted now through intake (frame sent untrimmed).
    const frame = uniqueFrame();
    const delivered = storedSale(frame, '2026-11-01T08:00:00.000Z', {
      status: 'delivered',
      attempts: 2,
      updatedAt: '2026-11-01T08:05:00.000Z',
      downstreamId: '4711000123',
      error: undefined,
      openKind: undefined,
      dueAt: undefined,
    });
    const rejected = storedSale(frame, '2026-11-02T09:00:00.000Z', {
      status: 'rejected',
      attempts: 1,
      updatedAt: '2026-11-02T09:00:03.000Z',
      error: 'SAP refused the registration: DealerId unknown',
      openKind: undefined,
      dueAt: undefined,
    });
    await seedStatusRecords([delivered, rejected]);
    const accepted = await salesHandler(
      jsonPost(SALES, [salesRegistrationInput({ FrameNum: ` ${frame} ` })]),
      lambdaContext(),
    );
    const [{ id }] = JSON.parse(accepted.body).registrations;
    // Act
    const answer = await lookUp(frame);
    // Assess
    expect(answer.status).toBe(200);
    expect(answer.headers?.['content-type']).toBe('application/json');
    expect(answer.body).toEqual({
      FrameNum: frame,
      records: [
        {
          id,
          status: 'accepted',
          attempts: 0,
          acceptedAt: expect.any(String),
          updatedAt: expect.any(String),
        },
        {
          id: rejected.id,
          status: 'rejected',
          attempts: 1,
          acceptedAt: rejected.acceptedAt,
          updatedAt: rejected.updatedAt,
          error: rejected.error,
        },
        {
          id: delivered.id,
          status: 'delivered',
          attempts: 2,
          acceptedAt: delivered.acceptedAt,
          updatedAt: delivered.updatedAt,
          downstreamId: '4711000123',
        },
      ],
    });
    // The index holds what a look-up shows, not the record with its personal data.
    const [entry] = await salesRecordsByFrame('example-dealer', frame);
    expect(Object.keys(entry)).not.toContain('record');
  });

  it("never shows another client's records: an empty list, as for an unknown frame", async () => {
    const frame = uniqueFrame();
    await seedStatusRecords([storedSale(frame, '2026-11-03T10:00:00.000Z', {}, 'other-dealer')]);
    const accepted = await salesHandler(
      jsonPost(SALES, [salesRegistrationInput({ FrameNum: uniqueFrame() })]),
      lambdaContext(),
    );
    const dealersFrame = JSON.parse(accepted.body).registrations[0].FrameNum;
    const foreign = await lookUp(frame);
    const webForms = await lookUp(dealersFrame, { 'x-api-key': testKeys.webForms });
    const unknown = await lookUp('NOSUCHFRAME0000000000000000001');
    expect(foreign).toMatchObject({ status: 200, body: { FrameNum: frame, records: [] } });
    expect(webForms).toMatchObject({ status: 200, body: { FrameNum: dealersFrame, records: [] } });
    expect(unknown).toMatchObject({
      status: 200,
      body: { FrameNum: 'NOSUCHFRAME0000000000000000001', records: [] },
    });
  });

  it('lists sales records only: a case with the same frame number is not one', async () => {
    const frame = uniqueFrame();
    const crmCase = await caseHandler(jsonPost(CASE, caseInput({ frameNo: frame })), lambdaContext());
    expect(crmCase.statusCode).toBe(200);
    expect((await lookUp(frame, { 'x-api-key': testKeys.webForms })).body.records).toEqual([]);
  });

  it('trims the frame number as intake does, and answers it as stored', async () => {
    const frame = uniqueFrame();
    await salesHandler(jsonPost(SALES, [salesRegistrationInput({ FrameNum: frame })]), lambdaContext());
    // 30 characters once trimmed: within the limit.
    const padded = await lookUp(`\t ${frame} `);
    expect(padded.status).toBe(200);
    expect(padded.body.FrameNum).toBe(frame);
    expect(padded.body.records).toHaveLength(1);
    const longest = await lookUp(`  ${'A'.repeat(30)}  `);
    expect(longest).toMatchObject({ status: 200, body: { FrameNum: 'A'.repeat(30), records: [] } });
  });

  it.each([
    ['missing', undefined, 'FrameNum is required'],
    ['empty', '', 'FrameNum must not be blank'],
    ['blank', '   ', 'FrameNum must not be blank'],
    ['repeated', ['A1', 'A2'], 'FrameNum must be a single value'],
    ['repeated with the same value', ['A1', 'A1'], 'FrameNum must be a single value'],
    ['over-long', ` ${'A'.repeat(31)} `, 'FrameNum must be at most 30 characters'],
  ])('refuses a %s FrameNum with 400 in the sales shape', async (_case, frameNums, message) => {
    const answer = await lookUp(frameNums as string | string[] | undefined);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, message });
  });

  it('refuses a request without a key with 403 in the sales shape', async () => {
    const event = frameGet('A1');
    event.headers = {};
    const answer = await recordStatus(event, lambdaContext());
    expect(answer.statusCode).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({
      success: false,
      message: 'an API key is required in the x-api-key header',
    });
  });
});
