import { createHash, randomBytes } from 'node:crypto';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { CONSOLE_CALLBACK_PATH } from '../lib/console/constants.ts';
import type { LocalOidcProvider } from '../local/oidcProvider.ts';
import { apiEvent } from './factories/apiGateway.ts';

/** What a sign-in through the provider's pages ended with. */
export interface SignedIn {
  idToken: string;
  refreshToken?: string;
  /** The sign-in form as the provider served it (to check its labels). */
  formPage: string;
}

/** A sign-in refused on the form: its status and the page that said why. */
export interface SignInRefused {
  refused: { status: number; page: string };
}

/** Cookies by name, as a browser keeps them for one host (paths are ignored: the provider checks names). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Signs in as a person does in a browser, over HTTP against a real OpenID Connect provider: the authorization code
 * flow with PKCE (S256), the provider's own sign-in form posted with `Email` and `Password`, every redirect followed
 * with the cookies it set, and the code exchanged at the token endpoint with the code verifier.
 *
 * @returns the tokens, or `{ refused }` when the form answered instead of redirecting (a wrong password).
 * @example
 * const { idToken } = await signInToConsole({ issuer, clientId, apiUrl, email, password });
 */
export const signInToConsole = async (opts: {
  issuer: string;
  clientId: string;
  /** The API's base URL: the console's callback is `<apiUrl>/console/callback`. */
  apiUrl: string;
  email: string;
  password: string;
}): Promise<SignedIn | SignInRefused> => {
  const discovery = (await (await fetch(`${opts.issuer}/.well-known/openid-configuration`)).json()) as {
    authorization_endpoint: string;
    token_endpoint: string;
  };
  const redirectUri = `${opts.apiUrl}${CONSOLE_CALLBACK_PATH}`;
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorize = new URL(discovery.authorization_endpoint);
  authorize.search = new URLSearchParams({
    client_id: opts.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email',
    state,
    nonce: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();

  const jar = new CookieJar();
  const go = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
    });
    jar.take(response);
    return response;
  };

  let formPage = '';
  let response = await go(authorize.href);
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get('location');
    if (location?.startsWith(redirectUri)) {
      const answer = new URL(location);
      if (answer.searchParams.get('state') !== state) throw new Error('state came back changed');
      const code = answer.searchParams.get('code');
      if (!code) throw new Error(`no code: ${location}`);
      const tokens = await fetch(discovery.token_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          client_id: opts.clientId,
          code_verifier: verifier,
        }),
      });
      const body = (await tokens.json()) as { id_token?: string; refresh_token?: string };
      if (!tokens.ok || !body.id_token) throw new Error(`token endpoint: ${JSON.stringify(body)}`);
      return { idToken: body.id_token, refreshToken: body.refresh_token, formPage };
    }
    if (location) {
      response = await go(new URL(location, response.url || opts.issuer).href);
      continue;
    }
    const page = await response.text();
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (!action || formPage) return { refused: { status: response.status, page } };
    formPage = page;
    response = await go(new URL(action.replaceAll('&amp;', '&'), opts.issuer).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: opts.email, password: opts.password }).toString(),
    });
  }
  throw new Error('sign-in did not come back to the console within 12 steps');
};

/**
 * The ID token of one of the local provider's development users (`support@example.com`, `operator@example.com`),
 * signed in by its code flow with PKCE (signInToConsole).
 *
 * @example
 * const token = await devUserToken(oidc, apiUrl, 'operator@example.com');
 */
export const devUserToken = async (
  oidc: Pick<LocalOidcProvider, 'issuer' | 'clientId' | 'users'>,
  apiUrl: string,
  email: string,
): Promise<string> => {
  const password = oidc.users.find((u) => u.email === email)?.password ?? '';
  const signedIn = await signInToConsole({
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    apiUrl,
    email,
    password,
  });
  return (signedIn as SignedIn).idToken;
};

/**
 * The event API Gateway hands the console API for `<method> /console/api/<path>` (a `?query` in `path` becomes the
 * query string parameters), with the `Authorization` header given and a JSON body when `body` is defined.
 *
 * @example
 * await handler(consoleApiEvent('GET', 'records?q=WVW', `Bearer ${token}`), lambdaContext());
 */
export const consoleApiEvent = (
  method: 'GET' | 'POST',
  path: string,
  authorization?: string,
  body?: unknown,
): APIGatewayProxyEvent => {
  const [route, query] = path.split('?');
  return apiEvent({
    httpMethod: method,
    path: `/console/api/${route}`,
    resource: '/console/api/{proxy+}',
    pathParameters: { proxy: route },
    queryStringParameters: query ? Object.fromEntries(new URLSearchParams(query)) : null,
    headers: {
      ...(authorization ? { Authorization: authorization } : {}),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
};
