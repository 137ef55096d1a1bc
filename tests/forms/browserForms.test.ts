import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { crmCaseHandler, handler as defaultCaseHandler } from '../../functions/crmCase.ts';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { controlFieldNames } from '../../lib/forms/controlFields.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { CaseRecord, QueuedRecord } from '../../lib/types.ts';
import { apiEvent, formPost, jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const CASE = '/crm/case';
const PAGE_ORIGIN = 'https://forms.example.com';
const OTHER_ALLOWED = 'https://www.example.com';
const THANKS = `${PAGE_ORIGIN}/contact/thanks`;
const SORRY = `${OTHER_ALLOWED}/contact/sorry`;

const enabled: ClientsConfig = {
  ...clientsConfig,
  browserForms: {
    enabled: true,
    allowedOrigins: [PAGE_ORIGIN, OTHER_ALLOWED],
    throttle: { rateLimit: 1, burstLimit: 5 },
  },
};
const disabled: ClientsConfig = { ...enabled, browserForms: { ...enabled.browserForms, enabled: false } };
const caseHandler = crmCaseHandler(enabled);

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let caseQueue: string;
beforeAll(async () => {
  aws = await isolatedAws();
  caseQueue = aws.resources.queues.CaseQueue.url;
});

/** The fields of a valid case as a web form posts them, unique so that no test sees another's duplicate. */
const formFields = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...(Object.fromEntries(
    Object.entries(caseInput({ frameNo: uniqueFrame() })).map(([k, v]) => [k, String(v)]),
  ) as Record<string, string>),
  submit: 'Send',
  ...extra,
});

/** A form posted by a browser from a page of `origin`: no key, an Origin header. */
const browserPost = (
  fields: Record<string, string>,
  origin = PAGE_ORIGIN,
  headers: Record<string, string> = {},
) => {
  const event = formPost(CASE, fields, { origin, ...headers });
  delete event.headers['x-api-key'];
  return event;
};

/** A browser post with a body written out by hand (its escapes in the page's charset). */
const rawBrowserPost = (body: string, contentType = 'application/x-www-form-urlencoded') =>
  apiEvent({
    path: CASE,
    resource: CASE,
    headers: { 'Content-Type': contentType, origin: PAGE_ORIGIN },
    body,
  });

const post = (event: APIGatewayProxyEvent, handler = caseHandler) => handler(event, lambdaContext());

const queued = async (): Promise<QueuedRecord[]> => aws.drain(caseQueue);
const queuedCase = async (): Promise<CaseRecord & Record<string, unknown>> => {
  const messages = await queued();
  expect(messages).toHaveLength(1);
  return (await getStatusRecord(messages[0].id))?.record as CaseRecord & Record<string, unknown>;
};

const locationOf = (response: APIGatewayProxyResult): URL => {
  expect(response.statusCode).toBe(303);
  return new URL(String(response.headers?.location));
};

describe('browser forms: who may post without a key', () => {
  it('accepts a key-less post from an allowed origin, with CORS for exactly that origin', async () => {
    const response = await post(browserPost(formFields(), OTHER_ALLOWED));
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['access-control-allow-origin']).toBe(OTHER_ALLOWED);
    expect(response.headers?.vary).toMatch(/\bOrigin\b/);
    const { CrmId } = JSON.parse(response.body);
    const [message] = await queued();
    expect(message.id).toBe(CrmId);
  });

  it('refuses a key-less post from any other origin with 403 in the case shape, no CORS, nothing queued', async () => {
    for (const origin of ['https://evil.example.net', 'https://forms.example.com.evil.net', 'null']) {
      const response = await post(browserPost(formFields(), origin));
      expect(response.statusCode).toBe(403);
      expect(JSON.parse(response.body)).toMatch(/^Create Case failed: .*x-api-key/);
      expect(response.headers?.['access-control-allow-origin']).toBeUndefined();
    }
    expect(await queued()).toEqual([]);
  });

  it('refuses key-less posts even from an allowed origin while browser forms are off (the default)', async () => {
    expect(clientsConfig.browserForms.enabled).toBe(false);
    for (const handler of [crmCaseHandler(disabled), defaultCaseHandler]) {
      const response = await post(browserPost(formFields(), 'https://www.example.com'), handler);
      expect(response.statusCode).toBe(403);
      expect(response.headers?.['access-control-allow-origin']).toBeUndefined();
    }
    expect(await queued()).toEqual([]);
  });

  it('gives a client with a key JSON answers, whatever control fields it sends, and forwards none of them', async () => {
    const fields = formFields({ _success_url: THANKS, _error_url: SORRY, _charset_: 'UTF-8', website: '' });
    const response = await post(formPost(CASE, fields));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ CrmId: expect.any(String), CrmResponseSuccess: true });
    const record = await queuedCase();
    for (const name of [...controlFieldNames, 'submit']) expect(record).not.toHaveProperty(name);
  });
});

describe('browser forms: honeypot', () => {
  it('answers a filled honeypot as if accepted, but stores and queues nothing', async () => {
    const response = await post(browserPost(formFields({ website: 'https://spam.example.net' })));
    expect(response.statusCode).toBe(200);
    const { CrmId, CrmResponseSuccess } = JSON.parse(response.body);
    expect([CrmId, CrmResponseSuccess]).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), true]);
    expect(response.headers?.['access-control-allow-origin']).toBe(PAGE_ORIGIN);
    expect(await queued()).toEqual([]);
    expect(await getStatusRecord(CrmId)).toBeUndefined();
  });

  it('sends a bot to the thank-you page like anyone, still queueing nothing', async () => {
    const response = await post(browserPost(formFields({ website: 'x', _success_url: THANKS })));
    expect(locationOf(response).searchParams.get('CrmId')).toMatch(/^[0-9a-f]{32}$/);
    expect(await queued()).toEqual([]);
  });

  it('refuses an invalid case as usual even when the honeypot is filled (nothing tells a bot apart)', async () => {
    const response = await post(browserPost(formFields({ website: 'x', email: 'not-an-address' })));
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toMatch(/^Create Case failed: email/);
  });

  it('accepts a post whose honeypot is present but empty (people leave it so)', async () => {
    const response = await post(browserPost(formFields({ website: '  ' })));
    expect(response.statusCode).toBe(200);
    const record = await queuedCase();
    expect(record).not.toHaveProperty('website');
  });
});

describe('browser forms: thank-you and error pages', () => {
  it('sends the browser to the thank-you page with the CrmId of the queued case (303)', async () => {
    const response = await post(browserPost(formFields({ _success_url: THANKS, _error_url: SORRY })));
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(THANKS);
    const [message] = await queued();
    expect(location.search).toBe(`?CrmId=${message.id}`);
    expect(response.body).toBe('');
    expect(response.headers?.['access-control-allow-origin']).toBe(PAGE_ORIGIN);
    const stored = (await getStatusRecord(message.id))?.record;
    for (const name of controlFieldNames) expect(stored).not.toHaveProperty(name);
  });

  it("keeps the thank-you page's own query and fragment", async () => {
    const response = await post(browserPost(formFields({ _success_url: `${THANKS}?lang=de#top` })));
    const location = locationOf(response);
    expect(location.searchParams.get('lang')).toBe('de');
    expect(location.searchParams.get('CrmId')).toMatch(/^[0-9a-f]{32}/);
    expect(location.hash).toBe('#top');
    await queued();
  });

  it('sends the browser to the error page with the url-encoded reason when the case is refused', async () => {
    const response = await post(
      browserPost(formFields({ email: 'not-an-address', _success_url: THANKS, _error_url: SORRY })),
    );
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(SORRY);
    expect(location.search).toMatch(/^\?reason=[^&]+$/);
    expect(location.search).not.toContain(' ');
    const reason = decodeURIComponent(location.search.slice('?reason='.length));
    expect(reason).toMatch(/^email /);
    expect(reason).not.toContain('Create Case failed');
    expect(location.searchParams.get('reason')).toBe(reason);
    expect(await queued()).toEqual([]);
  });

  it('answers JSON when the form named no page for the outcome', async () => {
    const refused = await post(browserPost(formFields({ email: 'x', _success_url: THANKS })));
    expect(refused.statusCode).toBe(400);
    expect(JSON.parse(refused.body)).toMatch(/^Create Case failed: email/);
    const accepted = await post(browserPost(formFields({ _error_url: SORRY })));
    expect(accepted.statusCode).toBe(200);
    await queued();
  });

  it.each([
    ['_success_url', 'https://evil.example.net/thanks'],
    ['_success_url', 'https://forms.example.com.evil.net/thanks'],
    ['_error_url', 'http://forms.example.com/sorry'],
    ['_error_url', '/contact/sorry'],
    ['_success_url', 'javascript:alert(1)'],
    ['_success_url', '//evil.example.net/thanks'],
  ])('refuses %s %s (not on an allowed origin) with 400, queueing nothing', async (field, url) => {
    const response = await post(
      browserPost(formFields({ _error_url: SORRY, _success_url: THANKS, [field]: url })),
    );
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toBe(
      `Create Case failed: ${field} must be an absolute URL on an allowed origin`,
    );
    expect(await queued()).toEqual([]);
  });

  it('refuses a page URL given twice with 400', async () => {
    const body = `${new URLSearchParams(formFields())}&_success_url=${encodeURIComponent(THANKS)}&_success_url=${encodeURIComponent(THANKS)}`;
    const response = await post(rawBrowserPost(body));
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toBe('Create Case failed: _success_url must be given once');
  });
});

describe('browser forms: pages that are not UTF-8', () => {
  /** A form body as a page in `encode`'s charset posts it: every non-ASCII character percent-escaped in it. */
  const encodedForm = (fields: Record<string, string>, encode: (text: string) => Buffer) =>
    Object.entries(fields)
      .map(
        ([name, value]) =>
          `${name}=${[...encode(value)]
            .map((byte) =>
              /[A-Za-z0-9*\-._]/.test(String.fromCharCode(byte))
                ? String.fromCharCode(byte)
                : byte === 0x20
                  ? '+'
                  : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
            )
            .join('')}`,
      )
      .join('&');
  const windows1252 = (text: string) =>
    Buffer.from([...text].map((c) => (c === '€' ? 0x80 : c.charCodeAt(0))));
  const latin1 = (text: string) => Buffer.from(text, 'latin1');
  const utf8 = (text: string) => Buffer.from(text, 'utf8');

  it('reads a windows-1252 page named by _charset_: "€" arrives as "€"', async () => {
    const comments = 'Budget 5000 €, and a café & crème = +1';
    const body = encodedForm(formFields({ _charset_: 'windows-1252', comments }), windows1252);
    expect(body).toContain('%80');
    const response = await post(rawBrowserPost(body));
    expect(response.statusCode).toBe(200);
    const record = await queuedCase();
    expect(record.comments).toBe(comments);
    expect(record).not.toHaveProperty('_charset_');
  });

  it('reads an ISO-8859-1 page named by the Content-Type charset: "é" arrives as "é"', async () => {
    const fields = formFields({ firstName: 'Zoé', comments: 'Überprüfung für André' });
    const body = encodedForm(fields, latin1);
    expect(body).toContain('Zo%E9');
    const response = await post(
      rawBrowserPost(body, 'application/x-www-form-urlencoded; charset=ISO-8859-1'),
    );
    expect(response.statusCode).toBe(200);
    const record = await queuedCase();
    expect([record.firstName, record.comments]).toEqual(['Zoé', 'Überprüfung für André']);
  });

  it.each([
    ['_charset_=UTF-8', 'application/x-www-form-urlencoded'],
    ['', 'application/x-www-form-urlencoded; charset=utf-8'],
    ['', 'application/x-www-form-urlencoded'],
  ])('reads UTF-8 (%s %s) as before', async (charsetField, contentType) => {
    const fields = formFields({ firstName: 'Zoé', comments: '5000 € ✓' });
    const body = `${encodedForm(fields, utf8)}${charsetField ? `&${charsetField}` : ''}`;
    const response = await post(rawBrowserPost(body, contentType));
    expect(response.statusCode).toBe(200);
    const record = await queuedCase();
    expect([record.firstName, record.comments]).toEqual(['Zoé', '5000 € ✓']);
  });

  it('reads latin1 and cp1252 labels as browsers do', async () => {
    const body = `${encodedForm(formFields({ comments: 'café' }), latin1)}&_charset_=latin1`;
    const response = await post(rawBrowserPost(body, 'application/x-www-form-urlencoded; charset=cp1252'));
    expect(response.statusCode).toBe(200);
    expect((await queuedCase()).comments).toBe('café');
  });

  it.each([
    ['a Content-Type charset', '', 'application/x-www-form-urlencoded; charset=koi8-r'],
    ['a _charset_ field', '&_charset_=Shift_JIS', 'application/x-www-form-urlencoded'],
    ['an unknown label', '&_charset_=klingon', 'application/x-www-form-urlencoded'],
  ])('refuses any other charset in %s with 415', async (_label, charsetField, contentType) => {
    const body = `${new URLSearchParams(formFields())}${charsetField}`;
    const response = await post(rawBrowserPost(body, contentType));
    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toBe(
      'Create Case failed: charset must be utf-8, iso-8859-1 or windows-1252',
    );
    expect(await queued()).toEqual([]);
  });

  it('refuses a Content-Type charset and a _charset_ field that disagree with 415', async () => {
    const body = `${new URLSearchParams(formFields())}&_charset_=windows-1252`;
    const response = await post(rawBrowserPost(body, 'application/x-www-form-urlencoded; charset=utf-8'));
    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toMatch(/disagree/);
  });

  it('refuses JSON in any charset but UTF-8 with 415', async () => {
    const event = jsonPost(CASE, caseInput({ frameNo: uniqueFrame() }), {
      'Content-Type': 'application/json; charset=iso-8859-1',
    });
    const response = await post(event);
    expect(response.statusCode).toBe(415);
    expect(await queued()).toEqual([]);
  });

  it('still refuses a UTF-8 form whose escapes are not UTF-8 (400), and a body over 64 KiB (413)', async () => {
    const notUtf8 = await post(rawBrowserPost(`${new URLSearchParams(formFields())}&comments=caf%E9`));
    expect(notUtf8.statusCode).toBe(400);
    const big = `${new URLSearchParams(formFields())}&_charset_=windows-1252&comments=${'%E9'.repeat(22 * 1024)}`;
    const tooLarge = await post(rawBrowserPost(big));
    expect(tooLarge.statusCode).toBe(413);
    expect(await queued()).toEqual([]);
  });
});
