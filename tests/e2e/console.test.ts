/**
 * The console's sign-in under `npm start`, as a person meets it: the development users' lines it prints (email and
 * password), the local provider it runs, signed in to through the code flow with PKCE over HTTP, and the console API
 * served by serverless-offline at `/console/api/*`: 401 with `WWW-Authenticate: Bearer` without a token, 200 with
 * the ID token, `Cache-Control: no-store` and the CSP on both, and the operators' action refused to support. A
 * delivered sale's webhook resent by an operator, from the console and from `npm run webhook-secret -- resend`, reaches
 * npm start's sandbox receiver (which verifies it with the `standardwebhooks` package) with the same `webhook-id`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
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

/** Posts one sale over HTTP as example-dealer; its record id. */
const postSale = async (frame: string): Promise<string> => {
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
  return id;
};

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
    const id = await postSale(frame);
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

/** What npm start's sandbox webhook receiver lists for a client (sandbox/webhookReceiver.ts). */
interface Received {
  verified: boolean;
  webhookId: string;
  event: { type: string; data: { recordId: string } };
}

describe('resending a webhook under npm start', () => {
  it("sends a delivered sale's event again with the same webhook-id, for an operator (console and tool), never for support", async () => {
    // Prepare: a sale delivered and its webhook received; a support user and an operator signed in.
    const id = await postSale(`E2ERSND${Date.now().toString(36).toUpperCase()}`);
    const runner = JSON.parse(await readFile(join(dir, 'runner.json'), 'utf8')) as {
      webhookReceiverUrl: string;
    };
    const receivedOf = async (): Promise<Received[]> =>
      (
        (await (await fetch(`${runner.webhookReceiverUrl}/hooks/example-dealer`)).json()) as Received[]
      ).filter((r) => r.event.data.recordId === id);
    /** The receiver's posts of this sale, once there are `count` of them (20 s at most). */
    const receivedPosts = async (count: number) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const posts = await receivedOf();
        if (posts.length >= count || Date.now() > deadline) return posts;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const [first] = await receivedPosts(1);
    const issuer = /^\[local\] console sign-in provider: (\S+)$/m.exec(service.output())?.[1] ?? '';
    const tokens = await Promise.all(
      ['support@example.com', 'operator@example.com'].map(
        async (email) =>
          ((await signIn(email, printedUser(email)?.password ?? '', issuer)) as SignedIn).idToken,
      ),
    );
    const resend = (token: string) =>
      fetch(`${service.url}/console/api/records/${id}/webhook/resend`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
    // Act
    const refused = await resend(tokens[0]);
    const afterRefusal = await receivedOf();
    const resent = await resend(tokens[1]);
    const byTool = await new Promise<{ code: number; stdout: string }>((resolve) => {
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(npm_|AWS_)/i.test(name)),
      );
      execFile(
        'npm',
        ['run', '-s', 'webhook-secret', '--', 'resend', '--client', 'example-dealer', '--record', id],
        { cwd: projectRoot, env: { ...env, DATA_DIR: dir }, timeout: 30_000 },
        (error, stdout) =>
          resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });
    const posts = await receivedPosts(3);
    const record = await fetch(`${service.url}/console/api/records/${id}`, {
      headers: { authorization: `Bearer ${tokens[0]}` },
    });
    // Assess
    expect(first).toMatchObject({ verified: true, event: { type: 'record.delivered' } });
    expect(refused.status).toBe(403);
    expect(afterRefusal).toHaveLength(1);
    expect(resent.status).toBe(200);
    expect(await resent.json()).toEqual({ webhookId: first.webhookId, status: 200 });
    expect(byTool).toEqual({
      code: 0,
      stdout: `${id}: event ${first.webhookId} sent again to example-dealer's webhook: HTTP 200\n`,
    });
    // The same webhook-id each time, each post verified by the receiver's standardwebhooks library.
    expect(posts.map((post) => [post.webhookId, post.verified])).toEqual([
      [first.webhookId, true],
      [first.webhookId, true],
      [first.webhookId, true],
    ]);
    // The record's timeline: its delivery attempt with the status of SAP's answer, and the three webhook posts.
    const timeline = ((await record.json()) as { timeline: { type: string; status?: number | null }[] })
      .timeline;
    expect(timeline.filter((entry) => entry.type === 'attempt')).toEqual([
      expect.objectContaining({ downstream: 'erp', status: 201 }),
    ]);
    expect(timeline.filter((entry) => entry.type === 'webhook').map((entry) => entry.status)).toEqual([
      200, 200, 200,
    ]);
  }, 90_000);
});
