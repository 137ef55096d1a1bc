import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import type { Client } from '../../lib/clients/types.ts';
import { tableWebhookSwitch } from '../../lib/webhooks/disabledWebhooks.ts';
import { rotationWindowMs, signingSecrets } from '../../lib/webhooks/secrets.ts';
import { signWebhook } from '../../lib/webhooks/signing.ts';
import { watchedWebhookSecrets } from '../../local/webhookSecrets.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { runWebhookSecret } from '../../tools/webhookSecret/run.ts';

const clients: Client[] = [
  { name: 'north', dealers: [], webhook: { url: 'https://north.example/hooks' } },
  { name: 'quiet', dealers: [] },
];
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** Runs the command on a data directory at a given time; its exit code and output. */
const run = async (dir: string, args: string[], at = new Date()) => {
  let out = '';
  let err = '';
  const code = await runWebhookSecret(
    args,
    { DATA_DIR: dir },
    { out: (t) => (out += t), err: (t) => (err += t) },
    { clients, now: () => at },
  );
  return { code, out, err };
};
const dataDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-webhook-secret-'));
  dirs.push(dir);
  return dir;
};

describe('npm run webhook-secret (locally)', () => {
  it('rotate keeps the old secret beside the new one with its time: both verify during the window, only the new after', async () => {
    // Prepare
    const dir = await dataDir();
    await run(dir, ['show']);
    const before = watchedWebhookSecrets(dir)('north')?.current as string;
    const t0 = new Date();
    // Act
    const rotated = await run(dir, ['rotate', 'north'], t0);
    // Assess
    expect(rotated.code).toBe(0);
    const stored = JSON.parse(await readFile(join(dir, 'webhook-secrets.json'), 'utf8'));
    expect(stored.north).toEqual({
      current: expect.stringMatching(/^whsec_/),
      previous: before,
      rotatedAt: t0.toISOString(),
    });
    expect(rotated.out).toContain(`north: new secret ${stored.north.current}`);
    const secrets = watchedWebhookSecrets(dir)('north');
    if (!secrets) throw new Error('no secrets');
    const body = '{"type":"record.delivered"}';
    const signAt = (clock: Date) =>
      signWebhook({
        id: 'e1',
        body,
        secrets: signingSecrets(secrets, clock, rotationWindowMs()),
        at: new Date(),
      });
    const during = signAt(new Date(t0.getTime() + rotationWindowMs() - 1));
    const after = signAt(new Date(t0.getTime() + rotationWindowMs()));
    const verify = (secret: string, headers: object) =>
      new Webhook(secret).verify(body, headers as Record<string, string>);
    expect(verify(before, during)).toBeTruthy();
    expect(verify(stored.north.current, during)).toBeTruthy();
    expect(verify(stored.north.current, after)).toBeTruthy();
    expect(() => verify(before, after)).toThrow('No matching signature found');
  });

  it('enable re-enables a webhook a 410 disabled in the running npm start’s table; show tells which is disabled', async () => {
    // Prepare: an npm start's runner.json naming its store, and the flag the dispatcher writes on a 410.
    const dir = await dataDir();
    const aws = await isolatedAws();
    const table = aws.resources.tables.RecordsTable.name;
    await writeFile(
      join(dir, 'runner.json'),
      JSON.stringify({
        dynamoEndpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB,
        env: { RECORDS_TABLE: table },
      }),
    );
    const flags = tableWebhookSwitch(() => table);
    await flags.disable('north', { at: '2026-11-27T08:00:00.000Z', status: 410 });
    // Act
    const shownDisabled = await run(dir, ['show']);
    const enabled = await run(dir, ['enable', 'north']);
    const again = await run(dir, ['enable', 'north']);
    // Assess
    expect(shownDisabled.out).toContain('DISABLED after a 410 Gone');
    expect(enabled.out).toBe('north: webhook enabled again\n');
    expect(again.out).toBe('north: webhook was not disabled\n');
    expect(await flags.disabled('north')).toBeUndefined();
  });

  it('enable without a running npm start says where the flags are', async () => {
    const dir = await dataDir();
    const enabled = await run(dir, ['enable', 'north']);
    expect(enabled.code).toBe(1);
    expect(enabled.err).toContain('no npm start is running');
  });

  it('refuses an unknown client, a client without a webhook and an unknown command, with the usage', async () => {
    const dir = await dataDir();
    const unknown = await run(dir, ['rotate', 'nobody']);
    const quiet = await run(dir, ['rotate', 'quiet']);
    const wrong = await run(dir, ['turn', 'north']);
    expect([unknown.code, quiet.code, wrong.code]).toEqual([2, 2, 2]);
    expect(unknown.err).toContain('client "nobody" is not in config/clients.json');
    expect(quiet.err).toContain('client "quiet" declares no webhook');
    expect(wrong.err).toContain('usage: npm run webhook-secret');
  });
});
