/**
 * `node scripts/check-gateway-answers.ts <stage URL> [--origin <allowed origin>]`: after a deploy, checks what
 * API Gateway itself answers (not the handlers) against the contract: a call without a key and one with an
 * invalid key get 403 in each operation's shape, and, with `--origin` while browser forms are enabled, the
 * preflight of POST /crm/case answers that origin and no other. Makes no change and stores nothing: every
 * request is refused before a handler runs (or is a preflight). Exit code 1 on any mismatch.
 *
 * @example
 * node scripts/check-gateway-answers.ts https://abc123.execute-api.eu-west-1.amazonaws.com/prod --origin https://www.example.com
 */
import { parseArgs } from 'node:util';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { origin: { type: 'string' } },
});
const base = positionals[0]?.replace(/\/$/, '');
if (!base) {
  console.error('usage: node scripts/check-gateway-answers.ts <stage URL> [--origin <allowed origin>]');
  process.exit(2);
}

type Shape = 'case' | 'sales' | 'message';
const shapeOf = (body: unknown): Shape | undefined => {
  if (typeof body === 'string' && body.startsWith('Create Case failed: ')) return 'case';
  if (body && typeof body === 'object') {
    const keys = Object.keys(body).sort().join(',');
    if (keys === 'message,success' && (body as { success: unknown }).success === false) return 'sales';
    if (keys === 'message') return 'message';
  }
  return undefined;
};

const checks: { method: string; path: string; body?: string; contentType?: string; shape: Shape }[] = [
  {
    method: 'POST',
    path: '/erp/sales_registration',
    body: '[]',
    contentType: 'application/json',
    shape: 'sales',
  },
  { method: 'GET', path: '/erp/sales_registration/check', shape: 'message' },
  { method: 'GET', path: '/crm/case/check', shape: 'message' },
  { method: 'GET', path: '/openapi.json', shape: 'message' },
];
// POST /crm/case requires a key at API Gateway only while browser forms are off.
if (!values.origin)
  checks.push({
    method: 'POST',
    path: '/crm/case',
    body: '{}',
    contentType: 'application/json',
    shape: 'case',
  });

let failures = 0;
const report = (ok: boolean, what: string, detail: string) => {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : `: ${detail}`}`);
};

for (const check of checks) {
  for (const [label, key] of [
    ['without a key', undefined],
    ['with an invalid key', 'not-a-valid-key-000000000000'],
  ] as const) {
    const headers: Record<string, string> = {};
    if (check.contentType) headers['content-type'] = check.contentType;
    if (key) headers['x-api-key'] = key;
    const response = await fetch(`${base}${check.path}`, { method: check.method, headers, body: check.body });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const what = `${check.method} ${check.path} ${label}`;
    report(
      response.status === 403 && shapeOf(body) === check.shape && /x-api-key/.test(text),
      what,
      `${response.status} ${text.slice(0, 200)}`,
    );
  }
}

if (values.origin) {
  const preflight = (origin: string) =>
    fetch(`${base}/crm/case`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
  const allowed = await preflight(values.origin);
  report(
    allowed.ok && allowed.headers.get('access-control-allow-origin') === values.origin,
    `OPTIONS /crm/case from ${values.origin}`,
    `${allowed.status} allow-origin=${allowed.headers.get('access-control-allow-origin')}`,
  );
  const other = await preflight('https://not-allowed.invalid');
  report(
    other.headers.get('access-control-allow-origin') !== 'https://not-allowed.invalid',
    'OPTIONS /crm/case from another origin',
    `allow-origin=${other.headers.get('access-control-allow-origin')}`,
  );
}

process.exit(failures > 0 ? 1 : 0);
