/**
 * deploy/webhooks.cjs on its own (the packaged template is checked in events.test.ts): what it generates for a
 * configuration, per stage, and what it refuses to package.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import clients from '../../config/clients.json' with { type: 'json' };
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED, WEBHOOK_SECRET_HEADER } from '../../lib/events/constants.ts';
import { oslsScript, projectRoot } from '../../scripts/local/project.ts';
import type { Resource } from '../support/packagedTemplate.ts';

const require = createRequire(import.meta.url);
const webhooks = require('../../deploy/webhooks.cjs') as {
  generate: (
    config: ClientsConfig,
    at: { service: string; stage: string },
  ) => { Resources: Record<string, Resource> };
  constants: Record<string, unknown>;
};

const at = { service: 'dealer-gateway', stage: 'ci' };
const config = clients as ClientsConfig;

/** A configuration of two clients with webhooks and one without. */
const threeClients = (): ClientsConfig => ({
  clients: [
    {
      name: 'north-dealer',
      dealers: [1001],
      webhook: { url: 'https://north.example/hooks', secretName: 'north/hook' },
    },
    {
      name: 'south-dealer',
      dealers: [1002],
      webhook: { url: 'https://south.example/events', secretName: 'south/hook', rateLimitPerSecond: 3 },
    },
    { name: 'quiet-dealer', dealers: [1003] },
  ],
  browserForms: { enabled: false, allowedOrigins: [] },
});

const ofType = (resources: Record<string, Resource>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

describe('deploy/webhooks.cjs', () => {
  it('uses the source, detail type and header of lib/events/constants.ts', () => {
    expect(webhooks.constants).toMatchObject({ EVENT_SOURCE, RECORD_STATE_CHANGED, WEBHOOK_SECRET_HEADER });
  });

  it("gives each webhook client its own rule, matching that client's events only, and nothing to a client without one", () => {
    // Act
    const { Resources } = webhooks.generate(threeClients(), at);
    // Assess
    const rules = ofType(Resources, 'AWS::Events::Rule');
    expect(rules.map(([id]) => id).sort()).toEqual(['NorthDealerWebhookRule', 'SouthDealerWebhookRule']);
    for (const [id, rule] of rules) {
      const client = id.startsWith('North') ? 'north-dealer' : 'south-dealer';
      expect(rule.Properties.EventPattern).toEqual({
        source: [EVENT_SOURCE],
        'detail-type': [RECORD_STATE_CHANGED],
        detail: { client: [client] },
      });
    }
    expect(Object.keys(Resources).filter((id) => id.startsWith('Quiet'))).toEqual([]);
    expect(ofType(Resources, 'AWS::Events::ApiDestination')).toHaveLength(2);
    expect(ofType(Resources, 'AWS::SQS::Queue')).toHaveLength(2);
  });

  it('sends to the URL at the rate of the configuration (10 a second when not given)', () => {
    const { Resources } = webhooks.generate(threeClients(), at);
    expect(Resources.NorthDealerWebhookDestination.Properties).toMatchObject({
      InvocationEndpoint: 'https://north.example/hooks',
      HttpMethod: 'POST',
      InvocationRateLimitPerSecond: 10,
    });
    expect(Resources.SouthDealerWebhookDestination.Properties.InvocationRateLimitPerSecond).toBe(3);
    expect(Resources.SouthDealerWebhookConnection.Properties.AuthParameters).toEqual({
      ApiKeyAuthParameters: {
        ApiKeyName: WEBHOOK_SECRET_HEADER,
        ApiKeyValue: '{{resolve:secretsmanager:south/hook:SecretString}}',
      },
    });
  });

  it('generates nothing when no client has a webhook, and nothing for npm start (stage local)', () => {
    const none = structuredClone(config);
    for (const client of none.clients) delete client.webhook;
    const local = threeClients();
    local.clients[0].webhook = { url: 'http://localhost:4010/hooks', secretName: 'north/hook' };
    expect(webhooks.generate(none, at)).toEqual({ Resources: {} });
    expect(webhooks.generate(local, { ...at, stage: 'local' })).toEqual({ Resources: {} });
  });

  it.each(['http://localhost:4010/hooks', 'https://127.0.0.1/hooks'])(
    'refuses to package a webhook at %s for AWS, naming the client, the field and why',
    (url) => {
      const local = threeClients();
      local.clients[1].webhook = { url, secretName: 'south/hook' };
      expect(() => webhooks.generate(local, at)).toThrow(
        `config/clients.json: client "south-dealer": webhook.url "${url}" is for npm start only: stage "ci" delivers through an EventBridge API destination, which needs a public https:// URL`,
      );
    },
  );

  it('refuses a bad webhook by the rules the handlers apply', () => {
    const bad = threeClients();
    bad.clients[0].webhook = { url: 'ftp://x', secretName: 'north/hook' };
    expect(() => webhooks.generate(bad, at)).toThrow(
      'config/clients.json: client "north-dealer": webhook.url "ftp://x" must be an https:// URL (http:// only for localhost)',
    );
  });

  it('refuses a client whose dead-letter queue name would be longer than SQS allows', () => {
    const long = threeClients();
    long.clients[0].name = `n${'o'.repeat(62)}`;
    expect(() => webhooks.generate(long, { ...at, stage: 'a-rather-long-stage-name' })).toThrow(
      /longer than 80/,
    );
  });
});

describe('packaging a project whose client has a localhost webhook', () => {
  it('fails, naming the client, the URL and why (npm start only)', async () => {
    // Prepare: a copy of what resolving serverless.yml reads, with example-dealer's webhook on localhost.
    const copy = await mkdtemp(join(tmpdir(), 'dealer-gateway-webhook-package-'));
    try {
      for (const entry of ['serverless.yml', 'package.json', 'deploy', 'config', 'lib/clients'])
        await cp(join(projectRoot, entry), join(copy, entry), { recursive: true });
      await symlink(join(projectRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
      const local = structuredClone(config);
      local.clients[0].webhook = {
        url: 'http://localhost:4010/events',
        secretName: 'dealer-gateway/x/webhook',
      };
      await writeFile(join(copy, 'config', 'clients.json'), JSON.stringify(local));
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
      // Act
      const failure = await promisify(execFile)(
        process.execPath,
        [oslsScript, 'package', '--stage', 'ci', '--package', 'out'],
        { cwd: copy, env, maxBuffer: 16 * 1024 * 1024 },
      ).then(
        () => undefined,
        (error: { stdout: string; stderr: string }) => `${error.stdout}\n${error.stderr}`,
      );
      // Assess
      expect(failure).toContain(
        'config/clients.json: client "example-dealer": webhook.url "http://localhost:4010/events" is for npm start only',
      );
      expect(failure).toContain('needs a public https:// URL');
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  }, 120_000);
});
