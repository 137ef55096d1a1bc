/**
 * The OpenID Connect provider of `npm start`: oidc-provider (a certified implementation), in this process on a free
 * port of 127.0.0.1, so the console signs in locally exactly as it signs in with Cognito on AWS: the authorization
 * code flow with PKCE, an ID token with the person's groups in `cognito:groups` (Cognito's claim, so one verifier,
 * lib/console/idToken.ts, serves both), signed by a key it publishes.
 *
 * Two development users, `support@example.com` (group support) and `operator@example.com` (group operators), with
 * passwords made at every start (printed by scripts/start.ts as API keys are). Lifetimes as on AWS: an ID token lives
 * 1 hour; the sign-in 12 hours in all (the session, the refresh token, which is never rotated so its end is fixed at
 * sign-in, and the verifier's check of `auth_time`). Everything lives in memory: a restart signs everyone out.
 */
import { generateKeyPairSync, type JsonWebKey, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';
import {
  CONSOLE_CALLBACK_PATH,
  CONSOLE_PATH,
  GROUPS_CLAIM,
  ID_TOKEN_SECONDS,
  MAX_SIGN_IN_AGE_SECONDS,
} from '../lib/console/constants.ts';
import type { ConsoleRole } from '../lib/console/types.ts';
import { memoryAdapterFactory } from './oidcMemoryAdapter.ts';
import { errorPage, signedOutPage, signInPage, signOutPage } from './oidcPages.ts';

/** The console's client at the local provider (its audience): no secret, a browser app. */
export const LOCAL_CONSOLE_CLIENT_ID = 'dealer-gateway-console';

/** A development user: sign in with the email and the password of this start. */
export interface LocalConsoleUser {
  email: string;
  password: string;
  group: ConsoleRole;
  /** The subject of its tokens: stable across starts, so logs name the same person. */
  sub: string;
}

export interface LocalOidcProvider {
  /** http://127.0.0.1:<port>: the `iss` of its tokens, and where its discovery document is. */
  issuer: string;
  clientId: string;
  users: LocalConsoleUser[];
  /**
   * What the console's handlers need: CONSOLE_ISSUER_URL and CONSOLE_CLIENT_ID, and CONSOLE_SIGN_IN_ORIGIN (its token
   * endpoint is on the issuer itself, where Cognito's is on the pool's hosted domain).
   */
  env: { CONSOLE_ISSUER_URL: string; CONSOLE_CLIENT_ID: string; CONSOLE_SIGN_IN_ORIGIN: string };
  /**
   * Registers the console of the API at `apiUrl` (http://localhost:<port>) as the client's redirect:
   * `<apiUrl>/console/callback`. Until then the provider answers 503; called again (the API moved to another
   * port), it starts afresh.
   */
  serveConsoleAt(apiUrl: string): void;
  stop(): Promise<void>;
}

/** The users of every start, always these emails and groups (docs/operations.md, "The operations console"). */
const DEVELOPMENT_USERS: readonly Omit<LocalConsoleUser, 'password'>[] = [
  { email: 'support@example.com', group: 'support', sub: 'local-support-user' },
  { email: 'operator@example.com', group: 'operators', sub: 'local-operator-user' },
];

/** A password of 16 random bytes, new at every start. */
const newPassword = (): string => randomBytes(16).toString('base64url');

/** Compares two texts in time independent of where they differ. */
const sameText = (a: string, b: string): boolean => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};

/** The form body of a sign-in post (at most 16 KiB). */
const formOf = async (req: IncomingMessage): Promise<URLSearchParams> => {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 16_384) break;
  }
  return new URLSearchParams(text);
};

/**
 * Starts the local provider on 127.0.0.1 (a free port unless `port` is given); with `apiUrl`, it serves that
 * console at once.
 *
 * @example
 * const oidc = await startLocalOidcProvider({ apiUrl: 'http://localhost:3000' });
 * oidc.env // { CONSOLE_ISSUER_URL: 'http://127.0.0.1:41234', CONSOLE_CLIENT_ID: 'dealer-gateway-console' }
 */
export const startLocalOidcProvider = async (
  options: {
    apiUrl?: string;
    port?: number;
    /**
     * The private RSA key (JWK) to sign with, instead of one made now: a test that must sign tokens the provider's
     * published keys verify (another `iss` or `aud`, an old `auth_time`) gives its own.
     */
    signingKey?: JsonWebKey & { kid: string };
  } = {},
): Promise<LocalOidcProvider> => {
  const users: LocalConsoleUser[] = DEVELOPMENT_USERS.map((user) => ({ ...user, password: newPassword() }));
  // One signing key and one cookie key per start: tokens and sessions of an earlier start are worthless.
  const signingKey = {
    ...(options.signingKey ??
      generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' })),
    kid: options.signingKey?.kid ?? randomUUID(),
    use: 'sig',
    alg: 'RS256',
  };
  const cookieKeys = [randomBytes(32).toString('base64url')];

  let provider: Provider | undefined;
  let apiOrigin = '';
  const server: Server = createServer((req, res) => {
    void serve(req, res).catch((error: unknown) => {
      process.stderr.write(`[local] sign-in provider: ${String(error)}\n`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** Its pages' policy: nothing loads, nothing frames them, forms post here or back to the console. */
  const pageHeaders = (): Record<string, string> => ({
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; base-uri 'none'; form-action 'self' ${apiOrigin}; frame-ancestors 'none'`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!provider) {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '1' }).end('starting');
      return;
    }
    const interaction = /^\/interaction\/([\w-]+)(\/login)?$/.exec(new URL(req.url ?? '/', issuer).pathname);
    if (!interaction) {
      provider.callback()(req, res);
      return;
    }
    const action = `/interaction/${interaction[1]}/login`;
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'POST' && interaction[2] && details.prompt.name === 'login') {
      const form = await formOf(req);
      const email = form.get('email')?.trim().toLowerCase() ?? '';
      const user = users.find((u) => u.email === email);
      if (!user || !sameText(form.get('password') ?? '', user.password)) {
        res
          .writeHead(401, pageHeaders())
          .end(signInPage({ action, email, problem: 'Wrong email or password.' }));
        return;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: user.sub } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    if (details.prompt.name === 'consent') {
      // The console is this provider's own client: what it asks for is granted without a question.
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({
            accountId: details.session?.accountId,
            clientId: String(details.params.client_id),
          });
      if (!grant) throw new Error('grant of the interaction not found');
      const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { consent: details.grantId ? {} : { grantId } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    res.writeHead(200, pageHeaders()).end(signInPage({ action }));
  };

  const configuration = (apiUrl: string): Configuration => ({
    adapter: memoryAdapterFactory(),
    clients: [
      {
        client_id: LOCAL_CONSOLE_CLIENT_ID,
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [`${apiUrl}${CONSOLE_CALLBACK_PATH}`],
        post_logout_redirect_uris: [`${apiUrl}${CONSOLE_PATH}`],
        // Every ID token says when its person signed in: the verifier refuses a sign-in older than 12 hours.
        require_auth_time: true,
      },
    ],
    async findAccount(_ctx, sub) {
      const user = users.find((u) => u.sub === sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        claims: async () => ({ sub, email: user.email, email_verified: true, [GROUPS_CLAIM]: [user.group] }),
      };
    },
    claims: { openid: ['sub', GROUPS_CLAIM], email: ['email', 'email_verified'] },
    // The scope's claims go in the ID token, as Cognito's are: the console reads its person from the ID token.
    conformIdTokenClaims: false,
    cookies: { keys: cookieKeys },
    jwks: { keys: [signingKey] },
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.type = 'html';
          ctx.body = signOutPage(form);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.type = 'html';
          ctx.body = signedOutPage();
        },
      },
    },
    // A refresh token for the console (Cognito's app client issues one too), never rotated: it ends 12 hours after
    // the sign-in whatever happens, and with it the session.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: false,
    clientBasedCORS: (_ctx, origin, client) =>
      client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = errorPage(out);
    },
    ttl: {
      AccessToken: ID_TOKEN_SECONDS,
      AuthorizationCode: 60,
      IdToken: ID_TOKEN_SECONDS,
      RefreshToken: MAX_SIGN_IN_AGE_SECONDS,
      Interaction: 10 * 60,
      Session: MAX_SIGN_IN_AGE_SECONDS,
      Grant: MAX_SIGN_IN_AGE_SECONDS,
    },
  });

  const serveConsoleAt = (apiUrl: string): void => {
    const fresh = new Provider(issuer, configuration(apiUrl));
    // The provider's own pages (errors, sign-out) carry the same policy as the sign-in form.
    fresh.use(async (ctx, next) => {
      await next();
      if (ctx.type === 'text/html') ctx.set(pageHeaders());
    });
    apiOrigin = new URL(apiUrl).origin;
    provider = fresh;
  };
  if (options.apiUrl) serveConsoleAt(options.apiUrl);

  return {
    issuer,
    clientId: LOCAL_CONSOLE_CLIENT_ID,
    users,
    env: {
      CONSOLE_ISSUER_URL: issuer,
      CONSOLE_CLIENT_ID: LOCAL_CONSOLE_CLIENT_ID,
      CONSOLE_SIGN_IN_ORIGIN: issuer,
    },
    serveConsoleAt,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
};
