/** The operations console's fixed rules of sign-in and roles (docs/design.md, "The operations console"). */

/** Where the console is served on the stage's base URL (and `npm start`'s). */
export const CONSOLE_PATH = '/console/';

/**
 * Where the provider sends the browser back with the authorization code: the console's callback on the same base
 * URL (Cognito's app client and the local provider register exactly this, after the base URL).
 */
export const CONSOLE_CALLBACK_PATH = '/console/callback';

/** The claim that carries a person's groups: Cognito's name, which the local provider uses too (one verifier). */
export const GROUPS_CLAIM = 'cognito:groups';

/** The groups that are console roles, weakest first; any other group of a person is no role here. */
export const CONSOLE_ROLES = ['support', 'operators'] as const;

/**
 * A sign-in is good for 12 hours in all, however often its ID token is renewed: a token whose `auth_time` is older
 * is refused (Cognito's refresh token lives as long, so no new token comes after it either).
 */
export const MAX_SIGN_IN_AGE_SECONDS = 12 * 60 * 60;

/** How long an ID token lives (Cognito's app client and the local provider issue them so): 1 hour. */
export const ID_TOKEN_SECONDS = 60 * 60;

/** Clock skew allowed between the provider and the function when checking `exp`, `iat` and `auth_time`. */
export const CLOCK_TOLERANCE_SECONDS = 30;

/** The one algorithm ID tokens are signed with by both providers: nothing else (no `none`, no HMAC) is taken. */
export const ID_TOKEN_ALGORITHMS = ['RS256'];

/** The realm named in `WWW-Authenticate` on a 401. */
export const BEARER_REALM = 'dealer-gateway-console';
