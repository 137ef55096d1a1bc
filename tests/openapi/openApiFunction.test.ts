import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { handler } from '../../functions/openApi.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
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

  describe('its local server', () => {
    const served = async () =>
      JSON.parse(
        (await handler(apiEvent({ httpMethod: 'GET', path: '/openapi.json' }), lambdaContext())).body,
      ) as { servers: { url: string; description: string }[] };
    afterEach(() => {
      delete process.env.LOCAL_API_URL;
      resetSettings();
    });

    it('names the URL npm start listens on (LOCAL_API_URL, set by the local runner), whatever PORT is', async () => {
      // Prepare
      process.env.LOCAL_API_URL = 'http://localhost:3456';
      resetSettings();
      // Act
      const { servers } = await served();
      // Assess
      expect(servers).toEqual([
        { url: 'http://localhost:3456', description: expect.stringMatching(/npm start/) },
      ]);
    });

    it('stays the committed one where no local runner set LOCAL_API_URL (AWS)', async () => {
      // Prepare
      const committed = JSON.parse(readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8'));
      // Act
      const { servers } = await served();
      // Assess
      expect(servers).toEqual(committed.servers);
      expect(servers[0].url).toBe('http://localhost:3000');
    });
  });
});
