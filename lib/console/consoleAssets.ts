import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { securityHeaderDefaults } from '../http/securityHeaders.ts';
import { consoleAuthSettings, consoleSignInOrigin } from '../settings/settings.ts';
import type { ConsoleFile } from './consoleFile.ts';
import builtFiles from './generated/consoleFiles.js';

/** How long a browser keeps a script or stylesheet: a year, since its name changes with its content. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

/** The page itself is asked for again every time (it names this deployment's assets and sign-in provider). */
const PAGE_CACHE = 'no-cache';

/** The paths under /console that are the page: the app (with or without its final `/`), and the sign-in's return. */
const PAGE_PATHS = new Set(['', '/', '/callback']);

/** Escapes text for an HTML attribute value. */
const attribute = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The console page's Content-Security-Policy: scripts and styles of this stage only (no `unsafe-inline`, no
 * CDN), calls to its own API and to the sign-in provider (discovery at the issuer, the token endpoint at the
 * sign-in origin), nothing frames it.
 *
 * @example
 * consolePagePolicy('http://127.0.0.1:4100', 'http://127.0.0.1:4100')
 * // "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self' http://127.0.0.1:4100; …"
 */
export const consolePagePolicy = (issuer: string, signInOrigin: string): string => {
  const connect = [...new Set(["'self'", new URL(issuer).origin, signInOrigin])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
};

/** The headers of every answer: the API's security headers, with this file's policy and caching. */
const headersOf = (contentType: string, cacheControl: string, csp?: string): Record<string, string> => ({
  ...(securityHeaderDefaults.headers as Record<string, string>),
  'content-type': contentType,
  'cache-control': cacheControl,
  ...(csp ? { 'content-security-policy': csp } : {}),
});

/**
 * `GET /console/`, `/console/callback` and `/console/assets/<file>`: the console's built files (scripts/build-console.ts),
 * served by the stage itself. The page carries the sign-in provider's issuer and the console's client id (a
 * `<meta>` the app reads: no inline script), so one build serves every stage. A page holds no data: what the console
 * shows comes from /console/api/*, which answers nothing without a valid ID token; the app's first act without one
 * is the redirect to the sign-in.
 *
 * @example
 * consoleAssetAnswer({ ...event, path: '/console/' }) // 200 text/html, the page
 */
export const consoleAssetAnswer = (
  event: Pick<APIGatewayProxyEvent, 'path'> & { requestContext?: { path?: string } },
  files: readonly ConsoleFile[] = builtFiles,
): APIGatewayProxyResult => {
  const under = event.path.replace(/^.*?\/console(?=\/|$)/, '');
  if (PAGE_PATHS.has(under)) {
    const { issuer, clientId } = consoleAuthSettings();
    const page = files.find((f) => f.path === 'index.html');
    if (!page) throw new Error('the console was not built (scripts/build-console.ts)');
    // The page links its files by absolute path: the console's base as the browser asked for it (on AWS the stage's
    // base URL has a path, `/<stage>`), whether or not the address ends with `/`.
    const asked = event.requestContext?.path ?? event.path;
    const base = asked.replace(/(\/console)(\/.*)?$/, '$1/');
    const body = page.body
      .replaceAll('{{base}}', attribute(base))
      .replace('{{issuer}}', attribute(issuer))
      .replace('{{clientId}}', attribute(clientId));
    return {
      statusCode: 200,
      headers: headersOf(page.contentType, PAGE_CACHE, consolePagePolicy(issuer, consoleSignInOrigin())),
      body,
    };
  }
  const file = under.startsWith('/assets/') ? files.find((f) => `/${f.path}` === under) : undefined;
  if (!file)
    return {
      statusCode: 404,
      headers: headersOf('text/plain; charset=utf-8', 'no-store'),
      body: 'no such console file',
    };
  return { statusCode: 200, headers: headersOf(file.contentType, ASSET_CACHE), body: file.body };
};
