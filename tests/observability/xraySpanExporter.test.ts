/**
 * Export on AWS (contract section 8): with TRACES_EXPORT=xray, every span of an invocation goes, before the handler
 * returns, as OTLP JSON to X-Ray's OTLP path (`/v1/traces`), signed with Signature V4 for the service `xray` in the
 * function's region with the role's credentials. The local server stands in for X-Ray (AWS_ENDPOINT_URL_XRAY, the
 * SDK's own override); the signature is checked by recomputing it here from the request received, by the steps AWS
 * documents (canonical request, string to sign, derived key), independently of the signer the exporter uses.
 */
import { createHash, createHmac } from 'node:crypto';
import middy from '@middy/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceFlush } from '../../lib/observability/traceFlush.ts';
import { inSpan } from '../../lib/observability/tracing.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { tracesExport } from '../../lib/settings/settings.ts';
import { awsOk, type SeenRequest, startScriptedAws } from '../../testkit/scriptedAws.ts';

const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'AKIDXRAYEXAMPLE',
  AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEXAMPLE//token',
};

let xray: Awaited<ReturnType<typeof startScriptedAws>>;
beforeAll(async () => {
  xray = await startScriptedAws([awsOk({})]);
});
afterAll(() => xray.stop());

const withEnvironment = (values: Record<string, string | undefined>) => {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetSettings();
};

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** The Signature V4 a request should carry, recomputed from what was received (AWS's documented algorithm). */
const expectedSignature = (seen: SeenRequest, secret: string): string => {
  const authorization = String(seen.headers.authorization);
  const [, date, region, service] = /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request/.exec(
    authorization,
  ) as RegExpExecArray;
  const signedHeaders = (/SignedHeaders=([^,]+)/.exec(authorization) as RegExpExecArray)[1];
  const canonicalHeaders = signedHeaders
    .split(';')
    .map((name) => `${name}:${String(seen.headers[name]).trim()}\n`)
    .join('');
  const canonicalRequest = [
    seen.method,
    seen.url,
    '',
    canonicalHeaders,
    signedHeaders,
    sha256(seen.body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    String(seen.headers['x-amz-date']),
    scope,
    sha256(canonicalRequest),
  ].join('\n');
  const key = [region, service, 'aws4_request'].reduce(
    (k, part) => hmac(k, part),
    hmac(`AWS4${secret}`, date),
  );
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
};

describe('TRACES_EXPORT=xray', () => {
  it("sends the invocation's spans as OTLP JSON to X-Ray's /v1/traces before the handler returns, signed for xray in the region", async () => {
    // Prepare
    withEnvironment({
      ...CREDENTIALS,
      TRACES_EXPORT: 'xray',
      AWS_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL_XRAY: xray.endpoint,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    });
    const handler = middy()
      .use(traceFlush())
      .handler(async () => {
        await inSpan('accept records', { kind: 'server' }, async () => {
          await inSpan('queue records', {}, async () => {});
        });
        return 'done';
      });
    // Act
    const answer = await handler({}, {} as never);
    // Assess: both spans are in, in one request, when the handler has returned.
    expect(answer).toBe('done');
    const posts = xray.requests.filter((r) => r.url === '/v1/traces');
    expect(posts).toHaveLength(1);
    const [post] = posts;
    expect(post.method).toBe('POST');
    expect(post.headers['content-type']).toBe('application/json');
    const body = JSON.parse(post.body);
    const spans = body.resourceSpans.flatMap((r: { scopeSpans: { spans: { name: string }[] }[] }) =>
      r.scopeSpans.flatMap((s) => s.spans),
    );
    expect(spans.map((s: { name: string }) => s.name).sort()).toEqual(['accept records', 'queue records']);
    const authorization = String(post.headers.authorization);
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDXRAYEXAMPLE\/\d{8}\/eu-central-1\/xray\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(post.headers['x-amz-security-token']).toBe(CREDENTIALS.AWS_SESSION_TOKEN);
    expect(
      authorization.endsWith(`Signature=${expectedSignature(post, CREDENTIALS.AWS_SECRET_ACCESS_KEY)}`),
    ).toBe(true);
  });
});

describe('tracesExport', () => {
  it("xray: the region's X-Ray OTLP endpoint by default; the SDK's endpoint override or the OTLP variables when set", () => {
    expect(tracesExport({ TRACES_EXPORT: 'xray', AWS_REGION: 'eu-west-1' })).toEqual({
      url: 'https://xray.eu-west-1.amazonaws.com/v1/traces',
      xrayRegion: 'eu-west-1',
    });
    expect(tracesExport({ TRACES_EXPORT: 'xray', AWS_REGION: 'cn-north-1' })?.url).toBe(
      'https://xray.cn-north-1.amazonaws.com.cn/v1/traces',
    );
    expect(
      tracesExport({
        TRACES_EXPORT: 'xray',
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:4566/',
      }),
    ).toEqual({ url: 'http://127.0.0.1:4566/v1/traces', xrayRegion: 'eu-west-1' });
    expect(
      tracesExport({
        TRACES_EXPORT: 'xray',
        AWS_REGION: 'eu-west-1',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://vpce-1.xray.eu-west-1.vpce.amazonaws.com',
      }),
    ).toEqual({ url: 'https://vpce-1.xray.eu-west-1.vpce.amazonaws.com/v1/traces', xrayRegion: 'eu-west-1' });
  });

  it('on: the OTLP endpoint unsigned, nothing without one; off: nothing; anything else is refused', () => {
    expect(tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
    });
    expect(tracesExport({ AWS_REGION: 'eu-west-1' })).toBeUndefined();
    expect(tracesExport({ TRACES_EXPORT: 'off', AWS_REGION: 'eu-west-1' })).toBeUndefined();
    expect(() => tracesExport({ TRACES_EXPORT: 'cloudwatch' })).toThrow(/TRACES_EXPORT/);
  });
});
