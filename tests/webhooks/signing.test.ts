import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  newWebhookSecret,
  parseWebhookSecrets,
  rotateWebhookSecrets,
  settledWebhookSecrets,
  signingSecrets,
} from '../../lib/webhooks/secrets.ts';
import { signWebhook } from '../../lib/webhooks/signing.ts';

const HOUR = 3_600_000;
const body = JSON.stringify({
  type: 'record.delivered',
  timestamp: '2026-11-27T08:00:00.000Z',
  data: { sequence: 2 },
});
const id = 'rec-1:2026-11-27T08:00:00.000Z';

/** Verifies as an integrator does, with the official library (its clock: now). */
const verify = (secret: string, headers: object, payload = body) =>
  new Webhook(secret).verify(payload, headers as Record<string, string>);

describe('webhooks signed per Standard Webhooks v1, verified with the official standardwebhooks library', () => {
  it('verifies a signed body, and names no secret in any header', () => {
    // Prepare
    const secret = newWebhookSecret();
    // Act
    const headers = signWebhook({ id, body, secrets: [secret], at: new Date() });
    // Assess
    expect(verify(secret, { ...headers })).toEqual(JSON.parse(body));
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(JSON.stringify(headers)).not.toContain(secret.slice('whsec_'.length));
  });

  it('refuses a tampered body, a stale timestamp, another secret and a missing signature', () => {
    // Prepare
    const secret = newWebhookSecret();
    const headers = signWebhook({ id, body, secrets: [secret], at: new Date() });
    const stale = signWebhook({ id, body, secrets: [secret], at: new Date(Date.now() - 10 * 60_000) });
    // Act / Assess
    expect(() => verify(secret, headers, body.replace('"sequence":2', '"sequence":3'))).toThrow(
      WebhookVerificationError,
    );
    expect(() => verify(secret, stale)).toThrow('Message timestamp too old');
    expect(() => verify(newWebhookSecret(), headers)).toThrow('No matching signature found');
    const { 'webhook-signature': _, ...unsigned } = headers;
    expect(() => verify(secret, unsigned)).toThrow('Missing required headers');
  });

  it('during a rotation both secrets verify; after the window only the new one', () => {
    // Prepare: rotated at t0, a window of 24 h; the clock of the rotation is injected, no waiting.
    const t0 = new Date('2026-11-27T00:00:00.000Z');
    const old = newWebhookSecret();
    const rotated = rotateWebhookSecrets({ current: old }, t0);
    const sign = (clock: Date) =>
      signWebhook({ id, body, secrets: signingSecrets(rotated, clock, 24 * HOUR), at: new Date() });
    // Act
    const during = sign(new Date(t0.getTime() + 23 * HOUR));
    const after = sign(new Date(t0.getTime() + 24 * HOUR));
    // Assess
    expect(during['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(rotated.current, during)).toBeTruthy();
    expect(verify(old, during)).toBeTruthy();
    expect(after['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verify(rotated.current, after)).toBeTruthy();
    expect(() => verify(old, after)).toThrow('No matching signature found');
    expect(settledWebhookSecrets(rotated, new Date(t0.getTime() + 24 * HOUR), 24 * HOUR)).toEqual({
      current: rotated.current,
    });
  });
});

describe('webhook secrets: whsec_ and the base64 of 24 to 64 bytes, refused otherwise naming the client', () => {
  const where = '.data/webhook-secrets.json';
  const of = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;

  it.each([
    ['24 bytes', of(24)],
    ['64 bytes', of(64)],
    ['a new one', newWebhookSecret()],
  ])('takes %s', (_, value) => {
    expect(parseWebhookSecrets('a', value, where)).toEqual({ current: value });
  });

  it.each([
    ['23 bytes', of(23)],
    ['65 bytes', of(65)],
    ['no prefix', Buffer.alloc(32).toString('base64')],
    ['the old whsec- form', `whsec-${Buffer.alloc(24).toString('base64url')}`],
    ['not base64', 'whsec_not base64 at all, not at all!!'],
    ['a number', 42],
  ])('refuses %s', (_, value) => {
    expect(() => parseWebhookSecrets('example-dealer', value, where)).toThrow(
      '.data/webhook-secrets.json: the webhook secret of client "example-dealer" must be whsec_ followed by the base64 of 24 to 64 bytes',
    );
  });

  it('checks both secrets of a rotation and its time', () => {
    const current = newWebhookSecret();
    expect(() =>
      parseWebhookSecrets('a', { current, previous: 'x', rotatedAt: '2026-11-27T00:00:00Z' }, where),
    ).toThrow('client "a" (previous) must be whsec_');
    expect(() => parseWebhookSecrets('a', { current, previous: current, rotatedAt: 'soon' }, where)).toThrow(
      'client "a" (rotatedAt) must be an ISO 8601 time',
    );
  });
});
