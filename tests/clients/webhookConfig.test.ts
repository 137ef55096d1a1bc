/**
 * A client's webhook in config/clients.json, checked by the same rules where the handlers load the file
 * (checkClientsConfig, at module load) and where packaging reads it (deploy/apiKeys.cjs): every bad case names
 * the client and the field, and both readers refuse it with the same message.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { checkClientsConfig, clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { ClientsConfig, Webhook } from '../../lib/clients/types.ts';
import { isLocalWebhookUrl } from '../../lib/clients/webhookRules.cjs';

const require = createRequire(import.meta.url);
const { generate } = require('../../deploy/apiKeys.cjs') as {
  generate: (config: ClientsConfig, at: { service: string; stage: string }) => unknown;
};

/** The project's configuration with the first client's webhook replaced (undefined: none). */
const withWebhook = (webhook: unknown): ClientsConfig => {
  const config = structuredClone(clientsConfig);
  config.clients[0].webhook = webhook as Webhook;
  return config;
};

/** What each reader says of a configuration: the message of its error, or 'ok'. */
const verdicts = (config: ClientsConfig) => {
  const verdict = (read: () => unknown) => {
    try {
      read();
      return 'ok';
    } catch (error) {
      return (error as Error).message;
    }
  };
  return {
    handlers: verdict(() => checkClientsConfig(config)),
    packaging: verdict(() => generate(config, { service: 'dealer-gateway', stage: 'ci' })),
  };
};

describe('a client webhook in config/clients.json', () => {
  it('the project file declares one for example-dealer, over https (its secret is kept per stage, not named here)', () => {
    // Prepare / Act
    const [dealer, forms] = clientsConfig.clients;
    // Assess
    expect(dealer.webhook).toEqual({
      url: 'https://dealer-1234.example.com/dealer-gateway/events',
    });
    expect(forms.webhook).toBeUndefined();
  });

  it.each([
    ['no webhook', undefined],
    ['https to a public host', { url: 'https://hooks.example.net/x?y=1' }],
    ['https on a port', { url: 'https://hooks.example.net:8443/events' }],
    ['http to localhost (npm start)', { url: 'http://localhost:4010/events' }],
    ['http to 127.0.0.1', { url: 'http://127.0.0.1:4010/' }],
    ['the lowest rate', { url: 'https://h.example/e', rateLimitPerSecond: 1 }],
    ['the highest rate', { url: 'https://h.example/e', rateLimitPerSecond: 300 }],
  ])('accepts %s', (_label, webhook) => {
    // Prepare
    const config = withWebhook(webhook);
    // Act
    const said = verdicts(config);
    // Assess
    expect(said).toEqual({ handlers: 'ok', packaging: 'ok' });
  });

  const at = 'config/clients.json: client "example-dealer": webhook.';
  it.each([
    [
      'not a URL',
      { url: 'dealer-1234.example.com/events' },
      'url "dealer-1234.example.com/events" is not a URL',
    ],
    ['no URL', {}, 'url undefined is not a URL'],
    ['a URL that is not a string', { url: 42 }, 'url 42 is not a URL'],
    [
      'http to a public host',
      { url: 'http://dealer-1234.example.com/events' },
      'url "http://dealer-1234.example.com/events" must be an https:// URL (http:// only for localhost)',
    ],
    [
      'http to a host named like localhost',
      { url: 'http://localhost.example.com/' },
      'url "http://localhost.example.com/" must be an https:// URL (http:// only for localhost)',
    ],
    ['ftp', { url: 'ftp://x' }, 'url "ftp://x" must be an https:// URL (http:// only for localhost)'],
    [
      'credentials in the URL',
      { url: 'https://user:pw@h.example/e' },
      'url must not carry a user name or password',
    ],
    [
      'a secretName (the secret is now kept per client and stage)',
      { url: 'https://h.example/e', secretName: 'dealer-gateway/x/webhook' },
      'secretName is no longer used',
    ],
    [
      'a rate of 0',
      { url: 'https://h.example/e', rateLimitPerSecond: 0 },
      'rateLimitPerSecond 0 must be an integer from 1 to 300',
    ],
    [
      'a rate above 300',
      { url: 'https://h.example/e', rateLimitPerSecond: 301 },
      'rateLimitPerSecond 301 must be an integer from 1 to 300',
    ],
    [
      'a fractional rate',
      { url: 'https://h.example/e', rateLimitPerSecond: 2.5 },
      'rateLimitPerSecond 2.5 must be an integer',
    ],
    [
      'a rate as a string',
      { url: 'https://h.example/e', rateLimitPerSecond: '10' },
      'rateLimitPerSecond "10" must be an integer',
    ],
    [
      'a misspelt field',
      { url: 'https://h.example/e', secretname: 'x' },
      'secretname is not a webhook field',
    ],
  ])('refuses %s, naming the client and the field', (_label, webhook, message) => {
    // Prepare
    const config = withWebhook(webhook);
    // Act
    const said = verdicts(config);
    // Assess
    expect(said.handlers.startsWith(at), said.handlers).toBe(true);
    expect(said.handlers).toContain(message);
    expect(said.packaging).toBe(said.handlers);
  });

  it.each([null, 'https://h.example/e', ['https://h.example/e']])(
    'refuses a webhook that is %j, not an object',
    (webhook) => {
      const said = verdicts(withWebhook(webhook));
      expect(said.handlers).toBe(
        'config/clients.json: client "example-dealer": webhook must be an object {"url", "rateLimitPerSecond"?}',
      );
      expect(said.packaging).toBe(said.handlers);
    },
  );

  it('tells a local webhook from one AWS can reach', () => {
    expect(isLocalWebhookUrl('http://localhost:4010/e')).toBe(true);
    expect(isLocalWebhookUrl('https://127.0.0.1/e')).toBe(true);
    expect(isLocalWebhookUrl('https://dealer-1234.example.com/e')).toBe(false);
  });
});
