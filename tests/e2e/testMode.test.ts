/**
 * Test mode through `npm start` (docs/API.md, "Test mode"): the test client (`example-dealer-test`) posts sales and
 * cases with each magic last name while the live dealer posts ordinary sales and SAP is down for a while. Every test
 * record ends as its name says, told by webhooks that verify and listed in the feed, each marked `test`; the live
 * sales wait out the hold and are then delivered as usual; the SAP and Salesforce sandboxes received nothing from the
 * test client; and the outage changed no test outcome.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceSandbox, startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

const ATTEMPTS = 3;
const NAMES = ['Sample', 'REJECT', 'Retry', 'FAIL'] as const;
const EXPECTED: Record<(typeof NAMES)[number], { status: string; attempts: number }> = {
  Sample: { status: 'delivered', attempts: 1 },
  REJECT: { status: 'rejected', attempts: 1 },
  Retry: { status: 'delivered', attempts: 3 },
  FAIL: { status: 'failed', attempts: ATTEMPTS },
};

interface Received {
  verified: boolean;
  event: { type: string; data: { recordId: string; state: string; test?: boolean } };
}

let dir: string;
let service: RunningService;
let env: Record<string, string>;
let sap: SapSandbox;
let salesforce: SalesforceSandbox;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-test-mode-'));
  [sap, salesforce] = await Promise.all([startSapSandbox(), startSalesforceSandbox()]);
  service = await npmStart({
    DATA_DIR: dir,
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    CRM_BASE_URL: salesforce.url,
    CRM_CLIENT_ID: salesforce.clientId,
    CRM_CLIENT_SECRET: salesforce.clientSecret,
    DELIVERY_MAX_ATTEMPTS: String(ATTEMPTS),
    DELIVERY_RETRY_BASE_SECONDS: '1',
    OUTAGE_AFTER_FAILURES: '3',
    OUTAGE_PROBE_SECONDS: '2',
    RECONCILE_INTERVAL_SECONDS: '2',
    RECONCILE_AFTER_SECONDS: '10',
    POWERTOOLS_LOG_LEVEL: 'WARN',
  });
  env = (JSON.parse(readFileSync(join(dir, 'runner.json'), 'utf8')) as { env: Record<string, string> }).env;
}, 90_000);
afterAll(async () => {
  await service?.stop();
  await Promise.all([sap?.stop(), salesforce?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const call = async (path: string, key: string, body?: unknown) => {
  const response = await fetch(`${service.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.keys[key] },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const switchSap = async (down: boolean) => sap.outage.setDown(down);

/** Polls a look-up until the record leaves `accepted` (or the time is up). */
const settledView = async (path: string, key: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await call(path, key);
    if (body.status !== 'accepted' || Date.now() > deadline) return body;
    await sleep(250);
  }
};

/** Every feed entry of a client, paged as the API guide says. */
const feedOf = async (key: string) => {
  const entries: Received['event'][] = [];
  let after: string | null = null;
  do {
    const { body } = await call(`/events?limit=100${after ? `&after=${after}` : ''}`, key);
    entries.push(...(body.events as Received['event'][]));
    after = body.next as string | null;
  } while (after);
  return entries;
};

describe('test mode through npm start, with SAP down for a while', () => {
  it('ends every test record as its last name says, marked test everywhere, and never touches SAP or Salesforce', async () => {
    // Prepare: SAP down; the live dealer's sales and the test client's sales and cases.
    await switchSap(true);
    const liveSales = await call(
      '/erp/sales_registration',
      'example-dealer',
      [1, 2].map(() => salesRegistrationInput({ FrameNum: uniqueFrame('LIVE') })),
    );
    expect(liveSales.status).toBe(200);
    const liveIds = (liveSales.body.registrations as { id: string }[]).map((r) => r.id);
    const testSales = await call(
      '/erp/sales_registration',
      'example-dealer-test',
      NAMES.map((Name) => salesRegistrationInput({ FrameNum: uniqueFrame('TEST'), Name })),
    );
    expect(testSales.status).toBe(200);
    const saleIds = (testSales.body.registrations as { id: string }[]).map((r) => r.id);
    const caseIds: string[] = [];
    for (const surname of NAMES) {
      const answer = await call(
        '/crm/case',
        'example-dealer-test',
        caseInput({ surname, frameNo: uniqueFrame('TEST') }),
      );
      expect(answer.status).toBe(200);
      caseIds.push(answer.body.CrmId as string);
    }

    // Act: the test records settle while SAP is down; then SAP comes back and the live sales go through.
    const saleViews = await Promise.all(
      saleIds.map((id) => settledView(`/erp/sales_registration/${id}`, 'example-dealer-test')),
    );
    const caseViews = await Promise.all(
      caseIds.map((id) => settledView(`/crm/case/${id}`, 'example-dealer-test')),
    );
    const liveWhileDown = await Promise.all(
      liveIds.map(async (id) => (await call(`/erp/sales_registration/${id}`, 'example-dealer')).body),
    );
    await switchSap(false);
    const liveAfter = await Promise.all(
      liveIds.map((id) => settledView(`/erp/sales_registration/${id}`, 'example-dealer')),
    );

    // Assess: each test record as its name says, marked test, never heldSince.
    NAMES.forEach((name, index) => {
      for (const view of [saleViews[index], caseViews[index]]) {
        expect(view).toMatchObject({ ...EXPECTED[name], test: true });
        expect(view.heldSince).toBeUndefined();
      }
    });
    expect(saleViews[0].downstreamId).toMatch(/^49\d{6}$/);
    expect(caseViews[0].downstreamId).toMatch(/^500[0-9A-Za-z]{15}$/);
    // The live sales waited out the hold, then were delivered; never marked test.
    for (const view of liveWhileDown)
      expect(view).toMatchObject({ status: 'accepted', heldSince: expect.any(String) });
    for (const view of liveAfter) {
      expect(view.status).toBe('delivered');
      expect(view.test).toBeUndefined();
    }
    // Nothing of the test client's reached the sandboxes.
    const testIds = [...saleIds, ...caseIds];
    const sapSeen = JSON.stringify(sap.requests);
    const salesforceSeen = JSON.stringify(salesforce.requests);
    for (const id of testIds) {
      expect(sapSeen).not.toContain(id);
      expect(salesforceSeen).not.toContain(id);
    }
    for (const id of liveIds) expect(sapSeen).toContain(id);
    // Webhooks that verify, and feed entries, each marked test: one per final state.
    const receiver = `${env.LOCAL_WEBHOOK_RECEIVER_URL}/hooks/example-dealer-test`;
    let hooks: Received[] = [];
    for (let i = 0; i < 80; i++) {
      hooks = (await (await fetch(receiver)).json()) as Received[];
      if (testIds.every((id) => hooks.some((hook) => hook.event.data.recordId === id))) break;
      await sleep(250);
    }
    // The feed lists an entry once it has settled a few seconds (docs/API.md, the event feed).
    let feed = await feedOf('example-dealer-test');
    for (let i = 0; i < 80 && !testIds.every((id) => feed.some((entry) => entry.data.recordId === id)); i++) {
      await sleep(250);
      feed = await feedOf('example-dealer-test');
    }
    for (const id of testIds) {
      const hook = hooks.find((received) => received.event.data.recordId === id);
      expect(hook).toMatchObject({ verified: true, event: { data: { test: true } } });
      expect(feed.find((entry) => entry.data.recordId === id)).toMatchObject({ data: { test: true } });
    }
    let liveFeed = await feedOf('example-dealer');
    for (
      let i = 0;
      i < 80 && !liveIds.every((id) => liveFeed.some((entry) => entry.data.recordId === id));
      i++
    ) {
      await sleep(250);
      liveFeed = await feedOf('example-dealer');
    }
    for (const id of liveIds) {
      const entry = liveFeed.find((candidate) => candidate.data.recordId === id);
      expect(entry).toBeDefined();
      expect(entry?.data.test).toBeUndefined();
    }
  }, 180_000);
});
