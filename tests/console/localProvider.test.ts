/**
 * The local OpenID Connect provider of `npm start` (local/oidcProvider.ts), started as the local stack starts it,
 * driven over HTTP as a browser drives it: the authorization code flow with PKCE through its own sign-in form
 * (fields labelled Email and Password), the code exchanged with the verifier; each development user's ID token
 * carries its group in `cognito:groups` and passes the console's verifier; a wrong password is refused.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyIdToken } from '../../lib/console/idToken.ts';
import { type LocalOidcProvider, startLocalOidcProvider } from '../../local/oidcProvider.ts';
import { type SignedIn, signInToConsole } from '../../testkit/consoleSignIn.ts';

const apiUrl = 'http://localhost:39001';
let oidc: LocalOidcProvider;

beforeAll(async () => {
  oidc = await startLocalOidcProvider({ apiUrl });
});
afterAll(() => oidc?.stop());

const signIn = (email: string, password: string) =>
  signInToConsole({ issuer: oidc.issuer, clientId: oidc.clientId, apiUrl, email, password });

/** The provider's authorization endpoint, asked for a code for the console, with `pkce`'s parameters if any. */
const authorizeUrl = (pkce: Record<string, string> = {}): URL => {
  const authorize = new URL(`${oidc.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: oidc.clientId,
    redirect_uri: `${apiUrl}/console/callback`,
    response_type: 'code',
    scope: 'openid email',
    ...pkce,
  }).toString();
  return authorize;
};

describe('the local OpenID Connect provider', () => {
  it.for([
    ['support@example.com', 'support'],
    ['operator@example.com', 'operators'],
  ])('signs %s in by code flow with PKCE; the ID token names group %s', async ([email, group]) => {
    // Prepare
    const user = oidc.users.find((u) => u.email === email);
    // Act
    const signedIn = (await signIn(email, user?.password ?? '')) as SignedIn;
    const claims = decodeJwt(signedIn.idToken);
    const person = await verifyIdToken(signedIn.idToken, { issuer: oidc.issuer, audience: oidc.clientId });
    // Assess
    expect(signedIn.formPage).toMatch(/<label for="email">Email<\/label>/);
    expect(signedIn.formPage).toMatch(/<label for="password">Password<\/label>/);
    expect(signedIn.formPage).not.toMatch(/<script|style=/);
    expect(claims).toMatchObject({
      iss: oidc.issuer,
      aud: oidc.clientId,
      email,
      'cognito:groups': [group],
      auth_time: expect.any(Number),
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
    expect(person).toEqual({ sub: user?.sub, email, roles: [group] });
  });

  it('refuses a wrong password on its form, and issues no code', async () => {
    // Act
    const out = await signIn('support@example.com', 'not-the-password');
    // Assess
    expect(out).toEqual({
      refused: { status: 401, page: expect.stringContaining('Wrong email or password') },
    });
  });

  it('refuses an authorization request without PKCE', async () => {
    // Prepare
    const authorize = authorizeUrl();
    // Act
    const answer = await fetch(authorize, { redirect: 'manual' });
    // Assess
    expect(answer.status).toBe(303);
    expect(new URL(answer.headers.get('location') ?? '').searchParams.get('error')).toBe('invalid_request');
  });

  it('serves its sign-in form with a policy that loads nothing and cannot be framed', async () => {
    // Prepare: an authorization request as the console makes it, up to the form.
    const authorize = authorizeUrl({
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const first = await fetch(authorize, { redirect: 'manual' });
    // Act
    const form = await fetch(new URL(first.headers.get('location') ?? '', oidc.issuer), {
      headers: {
        cookie: first.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
    });
    // Assess
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    expect(form.headers.get('content-security-policy')).not.toMatch(/unsafe-inline/);
    expect(form.headers.get('cache-control')).toBe('no-store');
  });
});
