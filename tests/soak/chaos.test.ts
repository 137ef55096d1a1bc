/**
 * The soak's downstream chaos (soak/chaos.ts) against the real sandboxes, where it matters to the hold verdicts:
 *
 * - the SAP outage begins only once the fault the campaign queued before it has been taken, and after it SAP's
 *   calls meet no fault of the campaign's until SAP has stored a registration: the first delivery after the outage
 *   is timed on the service alone (holdFigures.ts). Negative control: the same chaos, once SAP has stored one,
 *   plants again;
 * - a burst of UNABLE_TO_LOCK_ROW answers Collections calls in part: some cases upserted, the others locked.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { startDownstreamChaos } from '../../soak/chaos.ts';

let sap: SapSandbox;
let salesforce: SalesforceSandbox;
let chaos: ReturnType<typeof startDownstreamChaos> | undefined;

beforeEach(async () => {
  [sap, salesforce] = await Promise.all([startSapSandbox(), startSalesforceSandbox()]);
});
afterEach(async () => {
  chaos?.calm();
  vi.restoreAllMocks();
  await Promise.all([sap.stop(), salesforce.stop()]);
});

/** Waits (bounded) until `check` holds. */
const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(25);
  return check();
};

const postRegistration = async (registrationId: string) => {
  const root = '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/';
  const auth = `Basic ${Buffer.from(`${sap.username}:${sap.password}`).toString('base64')}`;
  const session = await fetch(`${sap.url}${root}`, {
    headers: { Authorization: auth, 'X-CSRF-Token': 'Fetch' },
  });
  const cookie = session.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .join('; ');
  const response = await fetch(`${sap.url}${sap.servicePath}`, {
    method: 'POST',
    headers: {
      Authorization: auth,
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-CSRF-Token': session.headers.get('x-csrf-token') ?? '',
      Cookie: cookie,
    },
    body: JSON.stringify({
      DealerId: 1234,
      FrameNum: `FRAME-${registrationId}`,
      SaleDate: '2025-03-14',
      Name: 'Lee',
      Name2: 'Ann',
      Street: '1 Main St',
      email: 'ann@example.com',
      Phone: '0400 000 000',
      CommPriv: 'P',
      MoreInfo: 'N',
      AllowSharing: 'N',
      RegistrationId: registrationId,
    }),
  });
  return response.status;
};

describe('the soak downstream chaos', () => {
  it('begins the SAP outage once its queued fault is taken, and plants none after it until SAP stored one', async () => {
    // Prepare: every draw 0, so every single delivery draws a fault, always the first kind: 503.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    chaos = startDownstreamChaos({
      sap,
      salesforce,
      share: 1,
      batchShare: 0,
      permanentShare: 0,
      expireEveryMs: 1_000_000,
      lockBurstEveryMs: 0,
    });
    expect(await postRegistration('r1')).toBe(201);
    expect(await until(() => (chaos?.counts()['sap 503'] ?? 0) === 1)).toBe(true);

    // Act: the outage is asked for while that 503 waits in the sandbox.
    const outage = chaos.outage(300);
    await sleep(400);
    const downWhileQueued = sap.outage.isDown();
    const taken = await postRegistration('r2');
    expect(await until(() => sap.outage.isDown())).toBe(true);
    const run = await outage;
    // Up again: a repeat SAP recognises (409, nothing stored), then a new registration.
    const repeat = await postRegistration('r1');
    await sleep(400);
    const firstNew = await postRegistration('r3');
    await sleep(400);
    const afterStored = await postRegistration('r4');

    // Assess
    expect(downWhileQueued).toBe(false);
    expect(taken).toBe(503);
    expect(run).toMatchObject({ queuedAtStart: 0, callsWhileDown: 0 });
    expect(run.to - run.from).toBeGreaterThanOrEqual(290);
    expect(repeat).toBe(409);
    expect(firstNew).toBe(201);
    // Negative control: with SAP's first registration after the outage stored, the chaos plants again.
    expect(afterStored).toBe(503);
  });

  it('answers Collections calls in part during a burst: some cases upserted, the others UNABLE_TO_LOCK_ROW', async () => {
    // Prepare: every draw 0: a run of 3 locks from the second case; scattered locks every case but the first.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    chaos = startDownstreamChaos({
      sap,
      salesforce,
      share: 0,
      batchShare: 0,
      permanentShare: 0,
      expireEveryMs: 1_000_000,
      lockBurstEveryMs: 200,
      lockBurstCalls: 2,
    });
    const token = await fetch(`${salesforce.url}/services/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: salesforce.clientId,
        client_secret: salesforce.clientSecret,
      }),
    }).then(async (answer) => ((await answer.json()) as { access_token: string }).access_token);
    const upsert = async (ids: string[]) => {
      const response = await fetch(
        `${salesforce.url}/services/data/v66.0/composite/sobjects/Case/${salesforce.externalIdField}`,
        {
          method: 'PATCH',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            allOrNone: false,
            records: ids.map((id) => ({
              attributes: { type: 'Case' },
              [salesforce.externalIdField]: id,
              SuppliedName: 'Ann Lee',
              SuppliedEmail: 'ann@example.com',
            })),
          }),
        },
      );
      const results = (await response.json()) as { success: boolean; errors: { statusCode: string }[] }[];
      return { status: response.status, outcomes: results.map((r) => r.errors[0]?.statusCode ?? 'upserted') };
    };
    const planted = (pattern: string) =>
      chaos?.counts()[`salesforce collections answered in part, UNABLE_TO_LOCK_ROW ${pattern}`] ?? 0;

    // Act
    expect(await until(() => planted('a run') === 1)).toBe(true);
    const first = await upsert(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(await until(() => planted('scattered') === 1)).toBe(true);
    const second = await upsert(['c6', 'c7']);

    // Assess
    const locked = 'UNABLE_TO_LOCK_ROW';
    expect(first).toEqual({ status: 200, outcomes: ['upserted', locked, locked, locked, 'upserted'] });
    expect(second).toEqual({ status: 200, outcomes: ['upserted', locked] });
    expect(chaos.counts()['salesforce UNABLE_TO_LOCK_ROW bursts']).toBeGreaterThanOrEqual(1);
  });
});
