/**
 * The soak's ledger with batched calls (soak/batchCalls.ts, ledger.ts sapCallsOf / salesforceCallsOf):
 * a `$batch` or Collections call is split into one call per record it carried, each record's own status read
 * from when the sandbox stored it. A record created by a batch whose answer was lost and sent again in a second
 * batch is a repeat (allowed); the same content under a second id is a duplicate; a record refused inside a good
 * batch created nothing. Negative control: without the stored records to read from, a batch's records are never
 * counted as created, and the healthy batch below is reported lost.
 */
import { describe, expect, it } from 'vitest';
import type { LoggedRequest } from '../../sandbox/server.ts';
import {
  type PlanResult,
  promiseKept,
  reconcile,
  type StatusLookup,
  salesforceCallsOf,
  sapCallsOf,
} from '../../soak/ledger.ts';
import type { Plan } from '../../soak/workload.ts';

const SERVICE_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet';
const BATCH_PATH = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/$batch';
const id = (n: number) => n.toString(16).padStart(32, '0');
const token = (n: number) => `SKTESTR${n}`;

/** A `$batch` body as the ERP adapter sends it: one change set per registration, its entity on one line. */
const batchBody = (entities: { n: number; registrationId?: string }[]) =>
  entities
    .map(({ n, registrationId = id(n) }) =>
      [
        '--batch_x',
        'Content-Type: multipart/mixed; boundary=changeset_x',
        '',
        '--changeset_x',
        'Content-Type: application/http',
        '',
        'POST SalesRegistrationSet HTTP/1.1',
        'Content-Type: application/json',
        '',
        JSON.stringify({
          RegistrationId: registrationId,
          FrameNum: `F${n}`,
          Street: `${n} Lane ${token(n)}`,
        }),
        '--changeset_x--',
      ].join('\r\n'),
    )
    .join('\r\n');

const request = (method: string, path: string, status: number, body: string): LoggedRequest => ({
  method,
  path,
  status,
  headers: {},
  body,
});

const planOf = (n: number): PlanResult => {
  const plan = {
    index: n,
    kind: 'single',
    op: 'sale',
    records: [{ token: token(n), op: 'sale', fields: {} }],
    fresh: 1,
    form: false,
    copies: 1,
  } as unknown as Plan;
  const answer = { status: 200, ids: [id(n)] };
  return { plan, sends: [{ answers: [answer], final: answer }] };
};

const statuses = (entries: [number, StatusLookup][]) => new Map(entries.map(([n, s]) => [id(n), s] as const));
const delivered: StatusLookup = { http: 200, status: 'delivered' };
const iso = (ms: number) => new Date(ms).toISOString();

describe('the soak ledger with batched calls', () => {
  it('tells a record created by a batch whose answer was lost, sent again in the next batch, as a repeat', () => {
    // Prepare: batch 1 (answer lost, status 0) stored 1 and 2; batch 2 carried 1 and 2 again (409 each) and 3.
    const requests = [
      request('POST', BATCH_PATH, 0, batchBody([{ n: 1 }, { n: 2 }])),
      request('POST', BATCH_PATH, 202, batchBody([{ n: 1 }, { n: 2 }, { n: 3 }])),
    ];
    const stored = [
      { RegistrationId: id(1), createdAt: iso(1_001) },
      { RegistrationId: id(2), createdAt: iso(1_001) },
      { RegistrationId: id(3), createdAt: iso(2_001) },
    ];
    // Act
    const calls = sapCallsOf(requests, [1_000, 2_000], SERVICE_PATH, stored);
    const { counts } = reconcile({
      results: [planOf(1), planOf(2), planOf(3)],
      sapCalls: calls,
      salesforceCalls: [],
      kills: [],
      statuses: statuses([
        [1, delivered],
        [2, delivered],
        [3, delivered],
      ]),
      acceptedInStore: [],
    });
    // Assess
    expect(calls.map((call) => [call.id, call.status])).toEqual([
      [id(1), 201],
      [id(2), 201],
      [id(1), 409],
      [id(2), 409],
      [id(3), 201],
    ]);
    expect(counts.records).toMatchObject({ delivered: 3, repeated: 2, duplicated: 0, lost: 0 });
    expect(promiseKept(counts)).toBe(true);
  });

  it('finds the same content under a second id across two batches a duplicate, and a refused change set creates nothing', () => {
    // Prepare: record 1 went out under its id and, in a later batch, under another id (stored twice by SAP);
    // record 2 was refused inside the first batch and is `rejected`.
    const requests = [
      request('POST', BATCH_PATH, 202, batchBody([{ n: 1 }, { n: 2 }])),
      request('POST', BATCH_PATH, 202, batchBody([{ n: 1, registrationId: id(99) }])),
    ];
    const stored = [
      { RegistrationId: id(1), createdAt: iso(1_001) },
      { RegistrationId: id(99), createdAt: iso(2_001) },
    ];
    // Act
    const { counts } = reconcile({
      results: [planOf(1), planOf(2)],
      sapCalls: sapCallsOf(requests, [1_000, 2_000], SERVICE_PATH, stored),
      salesforceCalls: [],
      kills: [],
      statuses: statuses([
        [1, delivered],
        [2, { http: 200, status: 'rejected', error: 'Dealer not authorised' }],
      ]),
      acceptedInStore: [],
    });
    // Assess
    expect(counts.records).toMatchObject({ duplicated: 1, rejected: 1, leaked: 0 });
    expect(promiseKept(counts)).toBe(false);
  });

  it('splits a Collections call by external id: a whole-call 503 created nothing, the next call created each case', () => {
    // Prepare
    const body = JSON.stringify({
      allOrNone: false,
      records: [1, 2].map((n) => ({
        attributes: { type: 'Case' },
        Web_Case_Id__c: id(n),
        Description: token(n),
      })),
    });
    const path = '/services/data/v66.0/composite/sobjects/Case/Web_Case_Id__c';
    const requests = [request('PATCH', path, 503, body), request('PATCH', path, 200, body)];
    const stored = [
      { externalId: id(1), createdAt: iso(2_001) },
      { externalId: id(2), createdAt: iso(2_002) },
    ];
    // Act
    const calls = salesforceCallsOf(requests, [1_000, 2_000], stored);
    // Assess
    expect(calls.map((call) => [call.id, call.status, call.token])).toEqual([
      [id(1), 503, token(1)],
      [id(2), 503, token(2)],
      [id(1), 201, token(1)],
      [id(2), 201, token(2)],
    ]);
  });

  it('negative control: without the stored records, a healthy batch is reported lost', () => {
    // Prepare
    const requests = [request('POST', BATCH_PATH, 202, batchBody([{ n: 1 }]))];
    // Act
    const { counts } = reconcile({
      results: [planOf(1)],
      sapCalls: sapCallsOf(requests, [1_000], SERVICE_PATH, []),
      salesforceCalls: [],
      kills: [],
      statuses: statuses([[1, delivered]]),
      acceptedInStore: [],
    });
    // Assess
    expect(counts.records.lost).toBe(1);
    expect(promiseKept(counts)).toBe(false);
  });
});
