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
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import { oslsScript, projectRoot } from '../../local/project.ts';
import type { Resource } from '../../testkit/packagedTemplate.ts';

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
      webhook: { url: 'https://north.example/hooks' },
    },
    {
      name: 'south-dealer',
      dealers: [1002],
      webhook: { url: 'https://south.example/events', rateLimitPerSecond: 3 },
    },
    { name: 'quiet-dealer', dealers: [1003] },
  ],
  browserForms: { enabled: false, allowedOrigins: [] },
});

const ofType = (resources: Record<string, Resource>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);

describe('deploy/webhooks.cjs', () => {
  it('uses the source and detail type of lib/events/constants.ts', () => {
    expect(webhooks.constants).toMatchObject({ EVENT_SOURCE, RECORD_STATE_CHANGED });
  });

  it("queues each webhook client's events in its own message group, and nothing of a client without one", () => {
    // Act
    const { Resources } = webhooks.generate(threeClients(), at);
    // Assess: an EventBridge SQS target names one static MessageGroupId, so one rule (and target) per client.
    expect(Object.keys(Resources)).toEqual([
      'WebhookDispatcherRole',
      'NorthDealerWebhookRule',
      'SouthDealerWebhookRule',
      'WebhookQueuePolicy',
    ]);
    for (const client of ['north-dealer', 'south-dealer']) {
      const rule = Resources[`${client === 'north-dealer' ? 'North' : 'South'}DealerWebhookRule`];
      expect(rule.Properties.EventPattern).toEqual({
        source: [EVENT_SOURCE],
        'detail-type': [RECORD_STATE_CHANGED],
        detail: { client: [client] },
      });
      expect(rule.Properties.Targets).toEqual([
        {
          Id: 'webhookQueue',
          Arn: { 'Fn::GetAtt': ['WebhookQueue', 'Arn'] },
          SqsParameters: { MessageGroupId: client },
        },
      ]);
    }
    expect(ofType(Resources, 'AWS::Events::ApiDestination')).toEqual([]);
    expect(JSON.stringify(Resources)).not.toContain('quiet-dealer');
  });

  it("lets the dispatcher read each webhook client's secret of the stage, and no other", () => {
    // Act
    const { Resources } = webhooks.generate(threeClients(), at);
    const statements = (
      Resources.WebhookDispatcherRole.Properties.Policies as {
        PolicyDocument: { Statement: { Action: string[]; Resource: unknown }[] };
      }[]
    )[0].PolicyDocument.Statement;
    const secrets = statements.find((s) => s.Action.includes('secretsmanager:GetSecretValue'));
    // Assess
    expect(JSON.stringify(secrets?.Resource)).toBe(
      JSON.stringify(
        ['north-dealer', 'south-dealer'].map((client) => ({
          'Fn::Sub': `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:dealer-gateway/ci/webhooks/${client}-??????`,
        })),
      ),
    );
  });

  it('generates only the role when no client has a webhook, and the rules for npm start (stage local) too', () => {
    // Prepare
    const none = structuredClone(config);
    for (const client of none.clients) delete client.webhook;
    const local = threeClients();
    local.clients[0].webhook = { url: 'http://localhost:4010/hooks' };
    // Act
    const withoutWebhooks = webhooks.generate(none, at).Resources;
    const forLocal = webhooks.generate(local, { ...at, stage: 'local' }).Resources;
    // Assess: npm start's local bus routes by the same rules, groups included, to its webhook queue (local/eventBus.ts).
    expect(Object.keys(withoutWebhooks)).toEqual(['WebhookDispatcherRole']);
    expect(Object.keys(forLocal)).toEqual([
      'WebhookDispatcherRole',
      'NorthDealerWebhookRule',
      'SouthDealerWebhookRule',
      'WebhookQueuePolicy',
    ]);
  });

  it.each(['http://localhost:4010/hooks', 'https://127.0.0.1/hooks'])(
    'refuses to package a webhook at %s for AWS, naming the client, the field and why',
    (url) => {
      const local = threeClients();
      local.clients[1].webhook = { url };
      expect(() => webhooks.generate(local, at)).toThrow(
        `config/clients.json: client "south-dealer": webhook.url "${url}" is for npm start only: stage "ci" posts from AWS (the webhook dispatcher), which needs a public https:// URL`,
      );
    },
  );

  it('refuses a bad webhook by the rules the handlers apply', () => {
    const bad = threeClients();
    bad.clients[0].webhook = { url: 'ftp://x' };
    expect(() => webhooks.generate(bad, at)).toThrow(
      'config/clients.json: client "north-dealer": webhook.url "ftp://x" must be an https:// URL (http:// only for localhost)',
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
      local.clients[0].webhook = { url: 'http://localhost:4010/events' };
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
