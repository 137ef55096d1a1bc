import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { handler } from '../../functions/openApi.ts';
import { apiEvent, lambdaContext } from '../../testkit/factories/apiGateway.ts';

describe('GET /openapi.json', () => {
  it('answers the committed document as cacheable JSON', async () => {
    // Prepare
    const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
    // Act
    const response = await handler(apiEvent({ httpMethod: 'GET', path: '/openapi.json' }), lambdaContext());
    // Assess
    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({
      'content-type': 'application/json',
      'cache-control': 'public, max-age=300',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
    });
    expect(JSON.parse(response.body)).toEqual(committed);
    expect(JSON.parse(response.body).openapi).toBe('3.1.0');
  });
});
