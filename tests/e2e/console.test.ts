/**
 * The console's sign-in under `npm start`, as a person meets it: the development users' lines it prints (email and
 * password), the local provider it runs, signed in to through the code flow with PKCE over HTTP, and the console API
 * served by serverless-offline at `/console/api/*`: 401 with `WWW-Authenticate: Bearer` without a token, 200 with
 * the ID token, `Cache-Control: no-store` and the CSP on both, and the operators' action refused to support.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SignedIn, signInToConsole } from '../../testkit/consoleSignIn.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

let dir: string;
let service: RunningService;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-console-'));
  service = await npmStart({ DATA_DIR: dir });
}, 90_000);
afterAll(async () => {
  await service?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The printed line of a development user: its email, group and this start's password. */
const printedUser = (email: string) => {
  const line = new RegExp(
    `^\\[local\\] console sign-in ${email.replace('.', '\\.')} \\(group (\\w+)\\): password (\\S+)$`,
    'm',
  );
  const match = line.exec(service.output());
  return match ? { group: match[1], password: match[2] } : undefined;
};

/** A sign-in at the provider npm start printed, back to this service's console. */
const signIn = async (email: string, password: string, issuer: string) =>
  signInToConsole({ issuer, clientId: 'dealer-gateway-console', apiUrl: service.url, email, password });

describe('the console under npm start', () => {
  it('prints one line per development user with its email and password, and signs each in to the console API', async () => {
    // Prepare
    const support = printedUser('support@example.com');
    const operator = printedUser('operator@example.com');
    const issuer = /^\[local\] console sign-in provider: (\S+)$/m.exec(service.output())?.[1] ?? '';
    // Act
    const signedIn = (await signIn('support@example.com', support?.password ?? '', issuer)) as SignedIn;
    const operatorIn = (await signIn('operator@example.com', operator?.password ?? '', issuer)) as SignedIn;
    const unsigned = await fetch(`${service.url}/console/api/me`);
    const me = await fetch(`${service.url}/console/api/me`, {
      headers: { authorization: `Bearer ${signedIn.idToken}` },
    });
    const operatorMe = await fetch(`${service.url}/console/api/me`, {
      headers: { authorization: `Bearer ${operatorIn.idToken}` },
    });
    const refused = await fetch(`${service.url}/console/api/records/redrive`, {
      method: 'POST',
      headers: { authorization: `Bearer ${signedIn.idToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ids: ['0'.repeat(32)] }),
    });
    // Assess
    expect(support?.group).toBe('support');
    expect(operator?.group).toBe('operators');
    expect(decodeJwt(signedIn.idToken)).toMatchObject({ iss: issuer, 'cognito:groups': ['support'] });
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(me.status).toBe(200);
    expect(await me.json()).toEqual({ email: 'support@example.com', roles: ['support'] });
    expect(await operatorMe.json()).toEqual({ email: 'operator@example.com', roles: ['operators'] });
    expect(refused.status).toBe(403);
    for (const answer of [unsigned, me, refused]) {
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(answer.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
    }
  }, 60_000);

  it('refuses a wrong password on the sign-in form', async () => {
    // Prepare
    const issuer = /^\[local\] console sign-in provider: (\S+)$/m.exec(service.output())?.[1] ?? '';
    // Act
    const out = await signIn('operator@example.com', 'wrong-password', issuer);
    // Assess
    expect(out).toMatchObject({ refused: { status: 401 } });
  });

  it('answers every list under npm start: a sale found by its frame number, the activity counted from the store', async () => {
    // Prepare: a sale accepted over HTTP, and a support user signed in.
    const frame = `E2ELIST${Date.now().toString(36).toUpperCase()}`;
    const accepted = await fetch(`${service.url}/erp/sales_registration`, {
      method: 'POST',
      headers: { 'x-api-key': service.keys['example-dealer'], 'content-type': 'application/json' },
      body: JSON.stringify([
        {
          DealerId: 1234,
          FrameNum: frame,
          SaleDate: '2026-11-20',
          Name: 'Sample',
          Name2: 'Alex',
          Street: '1 Sample Street',
          email: 'alex@example.com',
          Phone: '+61 400 000 000',
          CommPriv: 'P',
        },
      ]),
    });
    const [{ id }] = ((await accepted.json()) as { registrations: { id: string }[] }).registrations;
    const issuer = /^\[local\] console sign-in provider: (\S+)$/m.exec(service.output())?.[1] ?? '';
    const support = printedUser('support@example.com');
    const { idToken } = (await signIn('support@example.com', support?.password ?? '', issuer)) as SignedIn;
    const get = (path: string) =>
      fetch(`${service.url}/console/api/${path}`, { headers: { authorization: `Bearer ${idToken}` } });
    // Act
    const answers = await Promise.all(
      [`records?q=${frame}`, 'records', 'failed', 'downstreams', 'webhooks', 'activity'].map(get),
    );
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as {
      records?: { id: string }[];
      hours?: { accepted: number }[];
    }[];
    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(bodies[0].records?.map((row) => row.id)).toEqual([id]);
    expect(bodies[5].hours).toHaveLength(48);
    expect(bodies[5].hours?.reduce((sum, hour) => sum + hour.accepted, 0)).toBeGreaterThan(0);
  }, 60_000);
});
