/**
 * A client's mode (config/clients.json `"mode"`): `live` by default, `test` for a test client; anything else is
 * refused when the configuration is read, naming the client.
 */
import { describe, expect, it } from 'vitest';
import { checkClientsConfig, clientNamed, clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { isTestCaller } from '../../lib/clients/types.ts';

const withClient = (client: Record<string, unknown>): ClientsConfig => ({
  clients: [client as unknown as ClientsConfig['clients'][number]],
  browserForms: { enabled: false, allowedOrigins: [] },
});

describe('a client’s mode', () => {
  it('refuses an unknown mode, naming the client', () => {
    // Act
    const refused = () => checkClientsConfig(withClient({ name: 'acme', dealers: [], mode: 'sandbox' }));
    // Assess
    expect(refused).toThrow('config/clients.json: client "acme": mode "sandbox" must be "live" or "test"');
  });

  it('takes live, test or none', () => {
    for (const mode of ['live', 'test', undefined])
      expect(() => checkClientsConfig(withClient({ name: 'acme', dealers: [], mode }))).not.toThrow();
  });

  it('the example configuration has one test client, bound to the live dealer’s dealers', () => {
    const testClients = clientsConfig.clients.filter((client) => client.mode === 'test');
    expect(testClients.map((client) => client.name)).toEqual(['example-dealer-test']);
    expect(testClients[0].dealers).toEqual(clientNamed('example-dealer')?.dealers);
  });

  it('a test client’s calls are test calls; a live client’s and a browser form’s are not', () => {
    const client = (mode?: 'live' | 'test') => ({
      kind: 'client' as const,
      client: { name: 'a', dealers: [], mode },
    });
    expect(isTestCaller(client('test'))).toBe(true);
    expect(isTestCaller(client('live'))).toBe(false);
    expect(isTestCaller(client())).toBe(false);
    expect(isTestCaller({ kind: 'browserForm', origin: 'https://www.example.com' })).toBe(false);
  });
});
