/**
 * The console's sign-in: OpenID Connect's authorization code flow with PKCE against the stage's provider (Cognito
 * on AWS, the local provider under `npm start`), by oauth4webapi. The tokens live in this module's memory only, never
 * in storage or a cookie; only the sign-in under way (PKCE verifier, state, nonce: no token) waits in
 * sessionStorage across the provider's redirect. After 1 hour without activity, or when the API refuses the token
 * (401), the tokens are dropped and the person signs in again with the form (`prompt=login`).
 */
import * as oauth from 'oauth4webapi';

/** A session ends after this long without a click or a key (docs/design.md, "How long a session lasts"). */
export const IDLE_MS = 60 * 60 * 1000;
/** The ID token is renewed (refresh token) when it has less than this left and the person is active. */
const RENEW_BEFORE_MS = 5 * 60 * 1000;
/** The sign-in under way, kept across the redirect to the provider and back. */
const PENDING_KEY = 'dealer-gateway-console.sign-in';

interface Tokens {
  idToken: string;
  refreshToken?: string;
  /** When the ID token expires (ms since the epoch, its `exp`). */
  expiresAt: number;
}

let tokens: Tokens | undefined;
let lastActivity = Date.now();

const meta = (name: string): string =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content ?? '';

const issuer = new URL(meta('console-issuer'));
const client: oauth.Client = { client_id: meta('console-client-id') };
/** Only the local provider of `npm start` speaks plain HTTP (on 127.0.0.1); Cognito is HTTPS. */
const requestOptions = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};

/** The console's own base URL (`…/console/`): the stage's base URL has a path on AWS. */
export const consoleBase = (): URL => {
  const match = /^(.*\/console)(\/|$)/.exec(location.pathname);
  return new URL(`${match ? match[1] : '/console'}/`, location.origin);
};
const redirectUri = (): string => new URL('callback', consoleBase()).href;

let discovered: Promise<oauth.AuthorizationServer> | undefined;
/** The provider's endpoints, from its discovery document (read once). */
const server = (): Promise<oauth.AuthorizationServer> => {
  discovered ??= oauth
    .discoveryRequest(issuer, { ...requestOptions, algorithm: 'oidc' })
    .then((response) => oauth.processDiscoveryResponse(issuer, response));
  return discovered;
};

/** Keeps the tokens of a token endpoint's answer (a renewal brings no new refresh token: the old one stays). */
const keep = (result: oauth.TokenEndpointResponse): void => {
  const claims = oauth.getValidatedIdTokenClaims(result);
  if (!result.id_token || !claims) throw new Error('the provider gave no ID token');
  tokens = {
    idToken: result.id_token,
    refreshToken: result.refresh_token ?? tokens?.refreshToken,
    expiresAt: claims.exp * 1000,
  };
};

/** Notes activity (a click, a key): a session lives on while its person works. */
export const markActive = (): void => {
  lastActivity = Date.now();
};

/** Whether the 1 hour without activity has passed. */
export const idleTooLong = (): boolean => Date.now() - lastActivity >= IDLE_MS;

export const signedIn = (): boolean => tokens !== undefined;

/**
 * Sends the browser to the provider's sign-in. `fresh`: the form is asked for even while the provider still
 * remembers the person (after an idle hour or a refused token, a session must not come back without a password).
 */
export const signIn = async (options: { fresh?: boolean } = {}): Promise<never> => {
  tokens = undefined;
  const as = await server();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, nonce, returnTo: location.hash }));
  const url = new URL(as.authorization_endpoint ?? '');
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: 'openid email',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...(options.fresh ? { prompt: 'login' } : {}),
  }).toString();
  location.assign(url.href);
  return new Promise<never>(() => {});
};

/** Ends the session here: the tokens are forgotten, and the form is asked for on the next sign-in. */
export const signOut = (): Promise<never> => signIn({ fresh: true });

/**
 * Completes a sign-in at `/console/callback`: the code exchanged with the PKCE verifier, the ID token's claims
 * checked (issuer, audience, expiry, nonce).
 *
 * @returns the page (`#/…`) the person was on before signing in.
 */
export const completeSignIn = async (): Promise<string> => {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as {
    verifier: string;
    state: string;
    nonce: string;
    returnTo: string;
  } | null;
  sessionStorage.removeItem(PENDING_KEY);
  if (!pending) throw new Error('no sign-in was under way in this tab');
  const as = await server();
  const params = oauth.validateAuthResponse(as, client, new URL(location.href), pending.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    redirectUri(),
    pending.verifier,
    requestOptions,
  );
  keep(
    await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    }),
  );
  markActive();
  return pending.returnTo;
};

/** Renews the ID token with the refresh token when it is about to expire; without one, signs in again. */
const fresh = async (): Promise<string> => {
  if (!tokens || idleTooLong()) return signIn({ fresh: true });
  if (tokens.expiresAt - Date.now() > RENEW_BEFORE_MS) return tokens.idToken;
  if (!tokens.refreshToken) return signIn({ fresh: true });
  const as = await server();
  try {
    const response = await oauth.refreshTokenGrantRequest(
      as,
      client,
      oauth.None(),
      tokens.refreshToken,
      requestOptions,
    );
    keep(await oauth.processRefreshTokenResponse(as, client, response));
  } catch {
    // The refresh token has ended (12 hours after the sign-in) or was revoked.
    return signIn({ fresh: true });
  }
  return tokens.idToken;
};

/** A refusal of the console API: its status and its `message`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Calls the console API (`/console/api/<path>`) with the ID token as `Authorization: Bearer`. A 401 (the token
 * expired or was refused) ends the session: back to the sign-in.
 *
 * @throws ApiError for any other answer than 2xx.
 */
export const api = async <T>(
  path: string,
  init: { method?: 'GET' | 'POST'; body?: unknown } = {},
): Promise<T> => {
  const idToken = await fresh();
  const response = await fetch(new URL(`api/${path}`, consoleBase()), {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${idToken}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (response.status === 401) return signIn({ fresh: true });
  const body = (await response.json().catch(() => ({}))) as { message?: string };
  if (!response.ok)
    throw new ApiError(response.status, body.message ?? `the console API answered ${response.status}`);
  return body as T;
};
