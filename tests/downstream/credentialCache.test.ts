/**
 * The credential cache the ERP's CSRF sessions and the CRM's access tokens share (lib/downstream/credentialCache.ts):
 * one fetch at a time for concurrent deliveries, a failure never kept, one renewal for many refusals.
 */
import { describe, expect, it } from 'vitest';
import { createCredentialCache } from '../../lib/downstream/credentialCache.ts';

type Result = { ok: true; token: string } | { ok: false; reason: string };

/** A downstream that hands out token-1, token-2, ... (or fails while `failing`), counting its calls. */
const fakeIssuer = () => {
  const issuer = {
    calls: 0,
    failing: false,
    fetch: async (): Promise<Result> => {
      issuer.calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return issuer.failing
        ? { ok: false, reason: 'HTTP 503' }
        : { ok: true, token: `token-${issuer.calls}` };
    },
  };
  return issuer;
};

const cacheOf = (issuer: ReturnType<typeof fakeIssuer>) =>
  createCredentialCache(issuer.fetch, (result: Result) => (result.ok ? result.token : undefined));

describe('createCredentialCache', () => {
  it('fetches once for many concurrent deliveries, and reuses it', async () => {
    // Prepare
    const issuer = fakeIssuer();
    const cache = cacheOf(issuer);
    // Act
    const results = await Promise.all(Array.from({ length: 10 }, () => cache.current()));
    const later = await cache.current();
    // Assess
    expect(issuer.calls).toBe(1);
    expect(new Set(results.map((r) => (r.ok ? r.token : r.reason)))).toEqual(new Set(['token-1']));
    expect(later).toEqual({ ok: true, token: 'token-1' });
  });

  it('keeps no failure: the next delivery asks again', async () => {
    // Prepare
    const issuer = fakeIssuer();
    issuer.failing = true;
    const cache = cacheOf(issuer);
    const failed = await cache.current();
    await new Promise((resolve) => setImmediate(resolve));
    issuer.failing = false;
    // Act
    const next = await cache.current();
    // Assess
    expect(failed.ok).toBe(false);
    expect(next).toEqual({ ok: true, token: 'token-2' });
  });

  it('renews once when many deliveries see the same token refused', async () => {
    // Prepare
    const issuer = fakeIssuer();
    const cache = cacheOf(issuer);
    await cache.current();
    // Act
    const renewed = await Promise.all(Array.from({ length: 5 }, () => cache.renew('token-1')));
    // Assess
    expect(issuer.calls).toBe(2);
    expect(renewed.every((r) => r.ok && r.token === 'token-2')).toBe(true);
  });

  it('a refusal of an older token gets the newer one without asking again', async () => {
    // Prepare: token-1 was already renewed to token-2.
    const issuer = fakeIssuer();
    const cache = cacheOf(issuer);
    await cache.current();
    await cache.renew('token-1');
    // Act
    const result = await cache.renew('token-1');
    // Assess
    expect(result).toEqual({ ok: true, token: 'token-2' });
    expect(issuer.calls).toBe(2);
  });
});
