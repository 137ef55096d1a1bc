import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSecrets } from '../../lib/delivery/secrets.ts';

/** A real HTTP server speaking SSM's JSON protocol (GetParameter), holding one SecureString. */
const parameters = new Map([['/dealer-gateway/test/erp/password', 's3cr3t']]);
const requests: { name: string; decrypt: boolean }[] = [];
const ssm = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const { Name, WithDecryption } = JSON.parse(body) as { Name: string; WithDecryption: boolean };
    requests.push({ name: Name, decrypt: WithDecryption });
    const value = parameters.get(Name);
    res.writeHead(value ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(
      JSON.stringify(
        value
          ? { Parameter: { Name, Type: 'SecureString', Value: value, Version: 1 } }
          : { __type: 'ParameterNotFound', message: 'not found' },
      ),
    );
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => ssm.listen(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SSM: `http://127.0.0.1:${(ssm.address() as AddressInfo).port}`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  });
});
afterAll(() => new Promise<void>((resolve) => ssm.close(() => resolve())));

describe('secrets from Parameter Store', () => {
  it('reads a SecureString named by NAME_PARAMETER, decrypted, once per cache period', async () => {
    // Prepare
    const env = { ERP_PASSWORD_PARAMETER: '/dealer-gateway/test/erp/password', OTHER: 'x' };
    // Act
    const first = await readSecrets(['ERP_PASSWORD'], env);
    const second = await readSecrets(['ERP_PASSWORD'], env);
    // Assess
    expect(first).toEqual({ ERP_PASSWORD: 's3cr3t' });
    expect(second).toEqual({ ERP_PASSWORD: 's3cr3t' });
    expect(requests).toEqual([{ name: '/dealer-gateway/test/erp/password', decrypt: true }]);
  });

  it('uses a value set directly (local running) without asking Parameter Store', async () => {
    const before = requests.length;
    const env = await readSecrets(['CRM_CLIENT_SECRET'], {
      CRM_CLIENT_SECRET: 'plain',
      CRM_CLIENT_SECRET_PARAMETER: '/x',
    });
    expect(env.CRM_CLIENT_SECRET).toBe('plain');
    expect(requests).toHaveLength(before);
  });

  it('fails clearly for a parameter that does not exist', async () => {
    await expect(
      readSecrets(['CRM_CLIENT_SECRET'], { CRM_CLIENT_SECRET_PARAMETER: '/missing' }),
    ).rejects.toThrow();
  });
});
