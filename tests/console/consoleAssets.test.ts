/**
 * The console's page and files as the consoleAssets function serves them (functions/consoleAssets.ts, from the
 * build of `npm test`'s first step, scripts/build-console.ts): the page's Content-Security-Policy (no
 * `unsafe-inline`, `frame-ancestors 'none'`, calls to the sign-in provider allowed), its links to the hashed files,
 * their content types and caching, and the budget of the issue: JavaScript and CSS at most 150 KB gzipped.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { handler } from '../../functions/consoleAssets.ts';
import builtFiles from '../../lib/console/generated/consoleFiles.js';
import { apiEvent, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { gzippedBytes } from '../../tools/consoleBuild.ts';

const ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc123';
const SIGN_IN = 'https://dealer-gateway-dev-1a2b.auth.eu-west-1.amazoncognito.com';

beforeEach(() => {
  Object.assign(process.env, {
    CONSOLE_ISSUER_URL: ISSUER,
    CONSOLE_CLIENT_ID: 'console-client-id',
    CONSOLE_SIGN_IN_ORIGIN: SIGN_IN,
  });
});

const get = async (path: string, requestPath?: string): Promise<APIGatewayProxyResult> =>
  (await handler(
    apiEvent({
      httpMethod: 'GET',
      path,
      ...(requestPath
        ? { requestContext: { requestId: 'r', path: requestPath } as APIGatewayProxyEvent['requestContext'] }
        : {}),
    }),
    lambdaContext(),
  )) as APIGatewayProxyResult;

describe('the console page', () => {
  it("is served with a policy that allows this stage's files and the sign-in provider, and nothing inline", async () => {
    // Act
    const page = await get('/console/');
    // Assess
    const csp = String(page.headers?.['content-security-policy']);
    expect(page.statusCode).toBe(200);
    expect(page.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-cache',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
    });
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`connect-src 'self' https://cognito-idp.eu-west-1.amazonaws.com ${SIGN_IN};`);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
    // Nothing the policy would have to allow inline: every script has a src, no style element or attribute.
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=/);
    expect(page.body).toContain(`<meta name="console-issuer" content="${ISSUER}">`);
    expect(page.body).toContain('<meta name="console-client-id" content="console-client-id">');
  });

  it('links its files by absolute path under the base the browser asked for, with or without the final slash', async () => {
    // Act
    const local = await get('/console');
    const callback = await get('/console/callback');
    const staged = await get('/console', '/dev/console/');
    // Assess
    const links = (body: string) => [...body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(links(local.body)).toEqual([
      expect.stringMatching(/^\/console\/assets\/console-[0-9a-f]{10}\.css$/),
      expect.stringMatching(/^\/console\/assets\/console-[0-9a-f]{10}\.js$/),
    ]);
    expect(callback.body).toBe(local.body);
    expect(links(staged.body).every((link) => link.startsWith('/dev/console/assets/'))).toBe(true);
  });

  it("serves the page's script and stylesheet with their content types, kept a year; an unknown file is 404", async () => {
    // Prepare
    const page = await get('/console/');
    const [css, js] = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    // Act
    const [style, script, missing, outside] = await Promise.all([
      get(css),
      get(js),
      get('/console/assets/console-0000000000.js'),
      get('/console/api.js'),
    ]);
    // Assess
    expect(style).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/css; charset=utf-8' } });
    expect(script).toMatchObject({
      statusCode: 200,
      headers: {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      },
    });
    expect(script.body.length).toBeGreaterThan(1000);
    expect([missing.statusCode, outside.statusCode]).toEqual([404, 404]);
  });
});

describe("the console's size", () => {
  it('JavaScript and CSS together are at most 150 KB gzipped, all served by the stage (no other origin named)', () => {
    // Act
    const bytes = gzippedBytes(builtFiles);
    // Assess
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(150 * 1000);
    for (const file of builtFiles)
      expect(file.body, file.path).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/i);
  });
});
