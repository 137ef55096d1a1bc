/**
 * The operations console in a real browser, as the support desk meets it: `npm start`, Chromium (testkit/chromium.ts:
 * the npm package @sparticuz/chromium, else Debian's, else this file is skipped loudly) driven by playwright-core,
 * signing in on the local provider's own form with the development users `npm start` prints. The pages are found
 * by the accessible names of the contract (section 7); every page is checked with axe-core and loads without a
 * Content-Security-Policy violation. `UPDATE_SCREENSHOTS=1` saves each page to docs/images/console-<page>.png.
 *
 * SAP is a sandbox of this test (ERP_BASE_URL), so that two sales can be made to fail (one attempt, a 503) and then be
 * delivered when redriven.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { CHROMIUM_ARGS, findChromium } from '../../testkit/chromium.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

const found = await findChromium();
if ('missing' in found)
  console.warn(`\n\n*** tests/e2e/consoleBrowser.test.ts SKIPPED: ${found.missing} ***\n\n`);
const title =
  'executablePath' in found
    ? `the console in a real browser (Chromium from ${found.source})`
    : `the console in a real browser (SKIPPED: ${found.missing})`;

const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

let dir: string;
let service: RunningService;
let sap: SapSandbox;
let browser: Browser;
/** Every Content-Security-Policy violation any page reported (the console must cause none). */
const violations: string[] = [];
/** The seeded records: a delivered sale, and the failed ones. */
let delivered: { id: string; frame: string };
let failed: string[];

/** The printed password of a development user (docs/operations.md, "The operations console"). */
const passwordOf = (email: string): string =>
  new RegExp(
    `^\\[local\\] console sign-in ${email.replace('.', '\\.')} \\(group \\w+\\): password (\\S+)$`,
    'm',
  ).exec(service.output())?.[1] ?? '';

const post = (records: unknown[]) =>
  fetch(`${service.url}/erp/sales_registration`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
    body: JSON.stringify(records),
  }).then(async (r) => (await r.json()) as { registrations: { id: string }[] });

/** A sale's state by the status look-up of its client. */
const stateOf = async (id: string): Promise<string> => {
  const answer = await fetch(`${service.url}/erp/sales_registration/${id}`, {
    headers: { 'x-api-key': service.keys['example-dealer'] },
  });
  return ((await answer.json()) as { status: string }).status;
};

/** Waits until a sale leaves `accepted`; its state then. */
const settled = async (id: string): Promise<string> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await stateOf(id);
    if (state !== 'accepted' || Date.now() > deadline) return state;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

/** A browser context of its own (its own provider session), whose pages report CSP violations. */
const newPage = async (): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) violations.push(message.text());
  });
  return { context, page };
};

/** Signs in as a person does: the console sends the browser to the provider's form, which sends it back. */
const signIn = async (page: Page, email: string, path = '#/search'): Promise<void> => {
  await page.goto(`${service.url}/console/${path}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(passwordOf(email));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/console/' && url.hash.startsWith('#/'));
};

/** The page's main content once nothing is loading any more. */
const settledMain = async (page: Page) => {
  const main = page.getByRole('main');
  await main
    .getByText('Loading…')
    .first()
    .waitFor({ state: 'detached', timeout: 10_000 })
    .catch(() => {});
  return main;
};

/** axe-core's serious and critical violations on the page as it stands. */
const axeViolations = async (page: Page): Promise<string[]> => {
  // Evaluated by the browser's debugging protocol, which the page's CSP does not govern (a <script> would be refused).
  await page.evaluate(axeSource);
  // An expression run in the page (whose globals Node's types do not know); its promise is awaited.
  const results = (await page.evaluate('axe.run(document)')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
};

const screenshot = async (page: Page, name: string): Promise<void> => {
  if (SCREENSHOTS)
    await page.screenshot({
      path: join(projectRoot, 'docs', 'images', `console-${name}.png`),
      fullPage: true,
    });
};

describe.skipIf('missing' in found)(title, () => {
  beforeAll(async () => {
    if (!('executablePath' in found)) return;
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-console-browser-'));
    sap = await startSapSandbox({ username: 'E2EUSER', password: 'e2e-pass' });
    [service, browser] = await Promise.all([
      npmStart({
        DATA_DIR: dir,
        DELIVERY_MAX_ATTEMPTS: '1',
        ERP_BASE_URL: sap.url,
        ERP_USERNAME: 'E2EUSER',
        ERP_PASSWORD: 'e2e-pass',
      }),
      chromium.launch({ executablePath: found.executablePath, args: CHROMIUM_ARGS, headless: true }),
    ]);
    // Three sales fail, one after the other (one attempt, SAP answers 503; fewer than the 5 failures in a row that
    // would hold SAP) ...
    failed = [];
    for (let n = 0; n < 3; n++) {
      sap.inject({ status: 503 });
      const [sale] = (await post([salesRegistrationInput({ FrameNum: uniqueFrame('CFL') })])).registrations;
      expect(await settled(sale.id)).toBe('failed');
      failed.push(sale.id);
    }
    sap.clearFaults();
    // ... and one is delivered.
    const frame = uniqueFrame('CDL');
    const [sale] = (await post([salesRegistrationInput({ FrameNum: frame })])).registrations;
    delivered = { id: sale.id, frame };
    expect(await settled(sale.id)).toBe('delivered');
    // A case delivered to npm start's Salesforce sandbox: its answer reports the org's API usage.
    const posted = await fetch(`${service.url}/crm/case`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-web-forms'] },
      body: JSON.stringify(caseInput({ frameNo: uniqueFrame('CCS') })),
    });
    const { CrmId } = (await posted.json()) as { CrmId: string };
    const deadline = Date.now() + 30_000;
    for (;;) {
      const look = await fetch(`${service.url}/crm/case/${CrmId}`, {
        headers: { 'x-api-key': service.keys['example-web-forms'] },
      });
      const { status } = (await look.json()) as { status: string };
      if (status !== 'accepted' || Date.now() > deadline) {
        expect(status).toBe('delivered');
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await sap?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // Waits for GET records?q= (helper "lists") and GET records/{id} with its timeline (helper "story").
  it('support signs in, finds a sale by its frame number and reads its delivery and webhook attempts in the Timeline', async () => {
    // Prepare
    const { context, page } = await newPage();
    await signIn(page, 'support@example.com');
    // Act
    await page.getByLabel('Search records').fill(delivered.frame);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: delivered.frame });
    await row.getByRole('link', { name: delivered.id }).click();
    // Assess
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(delivered.id);
    const timeline = page.getByRole('list', { name: 'Timeline' });
    // The attempt that delivered it, with the status of SAP's answer (its $batch change set's 201).
    await expect.poll(() => timeline.textContent()).toMatch(/Delivery attempt to SAP: HTTP 201/);
    // The webhook of example-dealer is called once the state changed: reloads until its attempt shows.
    await expect
      .poll(
        async () => {
          await page.reload();
          return (await page.getByRole('list', { name: 'Timeline' }).textContent()) ?? '';
        },
        { timeout: 20_000, interval: 1_000 },
      )
      .toMatch(/Webhook to example-dealer: HTTP 2\d\d/);
    expect(await page.getByRole('main').textContent()).toMatch(/delivered/);
    expect(await page.getByRole('button', { name: 'Resend webhook' }).count()).toBe(0);
    expect(violations).toEqual([]);
    await context.close();
  }, 60_000);

  // Waits for GET records/{id}/trace (helper "trace-console"): npm start's kept spans, drawn as a waterfall.
  it("draws the delivered sale's Trace on its record page: the intake request and its delivery, as rows of a table", async () => {
    // Prepare
    const { context, page } = await newPage();
    await signIn(page, 'support@example.com', `#/records/${delivered.id}`);
    // Act
    const trace = page.getByRole('table', { name: 'Trace' });
    await trace.waitFor();
    const rows = await trace.getByRole('row').allTextContents();
    // Assess: one row per span, the request first (at +0), its delivery attempt under it, both OK; the status said
    // in words.
    const intake = rows.findIndex((row) => row.includes('POST /erp/sales_registration'));
    const delivery = rows.findIndex((row) => row.includes('deliver salesRegistration'));
    expect(intake, rows.join('\n')).toBe(1);
    expect(rows[intake]).toMatch(/\+0\.0 ms.*OK \(HTTP 200\)/);
    expect(delivery, rows.join('\n')).toBeGreaterThan(intake);
    expect(rows[delivery]).toMatch(/Level 2: deliver salesRegistration.*OK/);
    expect(
      rows.some((row) => /SAP (\$batch|POST).*HTTP 20[01]/.test(row)),
      rows.join('\n'),
    ).toBe(true);
    expect(await page.getByRole('main').textContent()).toMatch(/Trace id [0-9a-f]{32}/);
    expect(violations).toEqual([]);
    await context.close();
  }, 60_000);

  it("shows Salesforce's API allowance on the Downstreams page: used / allowed, and when it was read", async () => {
    // Prepare
    const { context, page } = await newPage();
    await signIn(page, 'support@example.com', '#/downstreams');
    // Act
    const salesforce = page.getByRole('region', { name: 'Salesforce' });
    await salesforce.getByText('API allowance used').waitFor();
    // Assess
    await expect
      .poll(() => salesforce.textContent())
      .toMatch(/API allowance used\s*[\d,]+ \/ 115,000 \(read \d/);
    expect(violations).toEqual([]);
    await context.close();
  }, 60_000);

  // Waits for GET failed (helper "lists").
  it("shows support no redrive control, and refuses support's redrive (403) with nothing changed", async () => {
    // Prepare: support's ID token, as its page sends it to the API.
    const { context, page } = await newPage();
    const token = new Promise<string>((resolve) =>
      page.on('request', (request) => {
        const header = request.headers().authorization;
        if (header?.startsWith('Bearer ')) resolve(header.slice('Bearer '.length));
      }),
    );
    await signIn(page, 'support@example.com', '#/failed');
    const main = await settledMain(page);
    // Act
    const refused = await fetch(`${service.url}/console/api/records/redrive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [failed[2]] }),
    });
    // Assess
    expect(await main.getByRole('link', { name: failed[2] }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Redrive selected' }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    expect(refused.status).toBe(403);
    expect(await stateOf(failed[2])).toBe('failed');
    await context.close();
  }, 60_000);

  // Waits for GET failed (helper "lists"), the redrive's audit entry and GET audit (helper "story").
  it('an operator redrives two failed sales from Failed after a confirmation; they are delivered and the audit names them', async () => {
    // Prepare
    const { context, page } = await newPage();
    await signIn(page, 'operator@example.com', '#/failed');
    const main = await settledMain(page);
    const chosen = failed.slice(0, 2);
    // Act: choose two, ask, see the count, confirm.
    for (const id of chosen) await main.getByRole('checkbox', { name: `Select ${id}` }).check();
    await page.getByRole('button', { name: 'Redrive selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Redrive records?' });
    const asked = await dialog.textContent();
    const stillFailed = await Promise.all(chosen.map(stateOf));
    await dialog.getByRole('button', { name: 'Redrive 2 records' }).click();
    await page.getByRole('status').filter({ hasText: 'redriven' }).waitFor();
    // Assess
    expect(asked).toContain('2 records will be redriven');
    expect(stillFailed).toEqual(['failed', 'failed']);
    expect(await Promise.all(chosen.map(settled))).toEqual(['delivered', 'delivered']);
    expect(await stateOf(failed[2])).toBe('failed');
    await page.getByRole('link', { name: 'Audit' }).click();
    const audit = await settledMain(page);
    const entry = audit
      .getByRole('row')
      .filter({ hasText: 'operator@example.com' })
      .filter({ hasText: 'Redrive' });
    await entry.first().waitFor();
    for (const id of chosen) expect(await entry.first().getByRole('link', { name: id }).count()).toBe(1);
    await context.close();
  }, 90_000);

  it('after an hour without activity, the console drops its session and asks for the password again', async () => {
    // Prepare: the page's clock can be moved on.
    const { context, page } = await newPage();
    await page.clock.install();
    await signIn(page, 'support@example.com');
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    // Act
    await page.clock.fastForward('01:00:30');
    // Assess: the provider's form, although the provider still remembers the person.
    await page.getByLabel('Password').waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).origin).not.toBe(new URL(service.url).origin);
    await context.close();
  }, 60_000);

  it('while the person works, the console renews its ID token with the refresh token before it expires', async () => {
    // Prepare: signed in; 56 minutes on the page's clock without a click (the ID token lives 60).
    const { context, page } = await newPage();
    await page.clock.install();
    await signIn(page, 'support@example.com');
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    await page.clock.fastForward('00:56:00');
    const renewal = page.waitForRequest(
      (request) => request.method() === 'POST' && /grant_type=refresh_token/.test(request.postData() ?? ''),
      { timeout: 10_000 },
    );
    // Act: a click, and the call it makes.
    await page.getByRole('link', { name: 'Downstreams' }).click();
    // Assess: renewed at the provider, and still in the console.
    expect((await (await renewal).response())?.status()).toBe(200);
    await page.getByRole('heading', { name: 'Downstreams' }).waitFor();
    expect(new URL(page.url()).origin).toBe(new URL(service.url).origin);
    await context.close();
  }, 60_000);

  it('a token the API refuses (401: expired) sends the console back to the sign-in form', async () => {
    // Prepare: signed in; then every API call carries an expired ID token instead (the API itself refuses it).
    const { context, page } = await newPage();
    await signIn(page, 'support@example.com');
    await page.getByRole('heading', { name: 'Search' }).waitFor();
    const expired = [
      Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k' })).toString('base64url'),
      Buffer.from(JSON.stringify({ sub: 's', exp: 1, iat: 0 })).toString('base64url'),
      'c2lnbmF0dXJl',
    ].join('.');
    const statuses: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/console/api/')) statuses.push(response.status());
    });
    await page.route('**/console/api/**', (route) =>
      route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${expired}` } }),
    );
    // Act
    await page.getByRole('link', { name: 'Downstreams' }).click();
    // Assess
    await page.getByLabel('Password').waitFor({ timeout: 10_000 });
    expect(statuses).toContain(401);
    await context.close();
  }, 60_000);

  // Waits for every read route: records, failed, downstreams, webhooks, activity (helper "lists"); records/{id} and
  // audit (helper "story").
  it('every page passes axe-core without a serious or critical violation', async () => {
    // Prepare
    const { context, page } = await newPage();
    await signIn(page, 'operator@example.com');
    const pages: [string, string, string][] = [
      ['search', `#/search?q=${delivered.frame}`, 'Search'],
      ['record', `#/records/${delivered.id}`, delivered.id],
      ['downstreams', '#/downstreams', 'Downstreams'],
      ['failed', '#/failed', 'Failed'],
      ['webhooks', '#/webhooks', 'Webhooks'],
      ['activity', '#/activity', 'Activity'],
      ['audit', '#/audit', 'Audit'],
    ];
    const found: Record<string, string[]> = {};
    const problems: Record<string, string | null> = {};
    // Act
    for (const [name, hash, heading] of pages) {
      await page.goto(`${service.url}/console/${hash}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      const main = await settledMain(page);
      if (name === 'record') {
        await main.getByRole('table', { name: 'Trace' }).waitFor();
        await page.getByText('Customer', { exact: true }).click();
      }
      if (name === 'activity') await main.locator('svg[role="img"]').first().waitFor();
      await settledMain(page);
      problems[name] = await main
        .getByRole('alert')
        .first()
        .textContent({ timeout: 500 })
        .catch(() => null);
      found[name] = await axeViolations(page);
      await screenshot(page, name);
    }
    // Assess: each page showed its data (no refusal) and passed.
    expect(problems).toEqual(Object.fromEntries(pages.map(([name]) => [name, null])));
    expect(found).toEqual(Object.fromEntries(pages.map(([name]) => [name, []])));
    expect(violations).toEqual([]);
    await context.close();
  }, 90_000);
});
