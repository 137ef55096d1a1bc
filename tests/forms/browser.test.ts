/**
 * A real browser (Chromium, driven by playwright-core) submits ordinary HTML forms served from another
 * origin to POST /crm/case, behind a local stand-in for API Gateway, with browser forms enabled for that
 * origin. The Chromium of testkit/chromium.ts: the npm package @sparticuz/chromium, else Debian's; without either this
 * is skipped, loudly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmCaseHandler } from '../../functions/crmCase.ts';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { CHROMIUM_ARGS, findChromium } from '../../testkit/chromium.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { startApiGatewayAdapter } from './apiGatewayAdapter.ts';

const found = await findChromium();
const hasChromium = 'executablePath' in found;
const title = hasChromium
  ? `a real browser submitting web forms from another origin (Chromium from ${found.source})`
  : `a real browser submitting web forms (SKIPPED: ${found.missing})`;
if (!hasChromium) console.warn(`\n\n*** tests/forms/browser.test.ts SKIPPED: ${found.missing} ***\n\n`);

/** The form of a page: the fields a person fills in, the control fields as hidden inputs, the honeypot hidden. */
const formPage = (action: string, pageOrigin: string, charset: 'utf-8' | 'windows-1252') => `<!doctype html>
<html><head><meta charset="${charset}"><title>Contact us</title>
<style>.hp { position: absolute; left: -10000px; }</style></head>
<body>
<form method="post" action="${action}">
  <input type="hidden" name="_charset_">
  <input type="hidden" name="_success_url" value="${pageOrigin}/thanks.html">
  <input type="hidden" name="_error_url" value="${pageOrigin}/sorry.html">
  <label class="hp">Website <input name="website" tabindex="-1" autocomplete="off"></label>
  <label>First name <input name="firstName"></label>
  <label>Surname <input name="surname"></label>
  <label>E-mail <input name="email"></label>
  <label>Frame number <input name="frameNo"></label>
  <label><input type="checkbox" name="privacyConsent"> I agree</label>
  <label>Comments <textarea name="comments"></textarea></label>
  <button type="submit" name="submit" value="send">Send</button>
</form>
</body></html>`;

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let pages: Server;
let pageOrigin: string;
let api: Awaited<ReturnType<typeof startApiGatewayAdapter>>;
let profile: string;
let browser: BrowserContext;

describe.skipIf(!hasChromium)(title, () => {
  beforeAll(async () => {
    aws = await isolatedAws();
    // The site with the forms: its own origin (another port of 127.0.0.1).
    let action = '';
    pages = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://pages.invalid').pathname;
      if (path === '/form.html' || path === '/form-1252.html') {
        const charset = path === '/form.html' ? 'utf-8' : 'windows-1252';
        const html = formPage(action, pageOrigin, charset);
        res.writeHead(200, { 'content-type': `text/html; charset=${charset}` });
        res.end(charset === 'utf-8' ? Buffer.from(html, 'utf8') : Buffer.from(html, 'latin1'));
      } else if (path === '/thanks.html' || path === '/sorry.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><title>${path === '/thanks.html' ? 'Thank you' : 'Sorry'}</title><p>Done.</p>`,
        );
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

    // The service, with browser forms enabled for the site's origin only.
    api = await startApiGatewayAdapter({
      'POST /crm/case': crmCaseHandler({
        ...clientsConfig,
        browserForms: {
          enabled: true,
          allowedOrigins: [pageOrigin],
          throttle: { rateLimit: 1, burstLimit: 5 },
        },
      }),
    });
    action = `${api.url}/crm/case`;

    profile = await mkdtemp(join(tmpdir(), 'dealer-gateway-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: 'executablePath' in found ? found.executablePath : '',
      headless: true,
      args: ['--disable-quic', ...CHROMIUM_ARGS],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  /** Fills the form of `page` as a person would and submits it; resolves with the page the browser lands on. */
  const submit = async (pagePath: string, fields: Record<string, string>, landing: RegExp) => {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}${pagePath}`);
    for (const [name, value] of Object.entries(fields)) await page.fill(`[name="${name}"]`, value);
    await page.check('[name="privacyConsent"]');
    await Promise.all([page.waitForURL(landing, { timeout: 15_000 }), page.click('button[type="submit"]')]);
    const landed = new URL(page.url());
    await page.close();
    return landed;
  };

  const person = (frameNo: string) => ({
    firstName: 'Renée',
    surname: 'Browserform',
    email: 'renee.browserform@example.org',
    frameNo,
  });

  it('lands on the thank-you page with the CrmId of the queued case', async () => {
    const frameNo = uniqueFrame('BRW');
    const landed = await submit(
      '/form.html',
      { ...person(frameNo), comments: 'Please call me.' },
      /thanks\.html/,
    );
    expect(`${landed.origin}${landed.pathname}`).toBe(`${pageOrigin}/thanks.html`);
    const crmId = landed.searchParams.get('CrmId');
    const messages = await aws.drain(aws.resources.queues.CaseQueue.url);
    expect(messages.map((m) => m.id)).toEqual([crmId]);
    const record = (await getStatusRecord(messages[0].id))?.record as CaseRecord & Record<string, unknown>;
    expect(record).toMatchObject({ ...person(frameNo), privacyConsent: true, comments: 'Please call me.' });
    for (const field of ['_charset_', '_success_url', '_error_url', 'website', 'submit']) {
      expect(record).not.toHaveProperty(field);
    }
  }, 60_000);

  it('reads a windows-1252 page right: "€", "é" and "–" arrive as typed', async () => {
    const frameNo = uniqueFrame('BRW');
    const comments = 'Budget 5000 € – Zoé’s café';
    const landed = await submit('/form-1252.html', { ...person(frameNo), comments }, /thanks\.html/);
    const [message] = await aws.drain(aws.resources.queues.CaseQueue.url);
    expect(message.id).toBe(landed.searchParams.get('CrmId'));
    const stored = (await getStatusRecord(message.id))?.record as CaseRecord;
    expect(stored.comments).toBe(comments);
    expect(stored.firstName).toBe('Renée');
  }, 60_000);

  it('lands on the error page with the reason when the case is refused', async () => {
    const landed = await submit(
      '/form.html',
      { ...person(uniqueFrame('BRW')), email: 'not an address' },
      /sorry\.html/,
    );
    expect(landed.searchParams.get('reason')).toMatch(/^email /);
    expect(await aws.drain(aws.resources.queues.CaseQueue.url)).toEqual([]);
  }, 60_000);

  it('discards what a bot posts through the honeypot, and still thanks it', async () => {
    const page = await browser.newPage();
    await page.goto(`${pageOrigin}/form.html`);
    for (const [name, value] of Object.entries(person(uniqueFrame('BOT'))))
      await page.fill(`[name="${name}"]`, value);
    await page.fill('[name="website"]', 'https://spam.example.net', { force: true });
    await Promise.all([
      page.waitForURL(/thanks\.html/, { timeout: 15_000 }),
      page.click('button[type="submit"]'),
    ]);
    expect(new URL(page.url()).searchParams.get('CrmId')).toMatch(/^[0-9a-f]{32}$/);
    await page.close();
    expect(await aws.drain(aws.resources.queues.CaseQueue.url)).toEqual([]);
  }, 60_000);
});
