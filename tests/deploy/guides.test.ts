import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { oslsScript, projectRoot } from '../../local/project.ts';
import { packagedTemplate, type Template } from '../../testkit/packagedTemplate.ts';
import { webhookSecretName } from '../../tools/webhookSecret/run.ts';

/*
 * What the guides say about the deployed stack is what `npm run package` writes: each figure a guide quotes about the
 * template is read from the guide's own sentence and compared with the packaged template. A reworded sentence fails
 * here until its pattern below follows it, so no figure is left unchecked. The secrets a guide's commands make before
 * the first deploy are those the packaged template reads: a client's key missing from the key secret fails the
 * deploy itself (CloudFormation cannot resolve its reference, and rolls back).
 */

let template: Template;
beforeAll(async () => {
  ({ template } = await packagedTemplate());
}, 180_000);

const guide = (file: string) => readFileSync(join(projectRoot, file), 'utf8').replace(/\s+/g, ' ');

/** The numbers a guide's sentence quotes (the pattern's groups); fails when the sentence is not there. */
const quoted = (file: string, pattern: RegExp): number[] => {
  const match = pattern.exec(guide(file));
  expect(match, `${file} no longer says ${pattern}: update the guide or this test`).not.toBeNull();
  return (match as RegExpExecArray).slice(1).map(Number);
};

const properties = (id: string) => template.Resources[id]?.Properties as Record<string, unknown>;
const lambdaTimeout = (fn: string) => properties(`${fn}LambdaFunction`).Timeout;

describe('docs/deploying.md, "What gets deployed"', () => {
  it("quotes the delivery queues' visibility timeout and the workers' timeout as packaged", () => {
    // Prepare
    const [visibility, worker] = quoted(
      'docs/deploying.md',
      /visibility timeout (\d+) s, six times the worker timeout \((\d+) s\)/,
    );
    // Act
    const queues = ['SalesRegistrationQueue', 'CaseQueue'].map((id) => properties(id).VisibilityTimeout);
    const workers = ['ErpDelivery', 'CrmDelivery'].map(lambdaTimeout);
    // Assess
    expect(queues).toEqual([visibility, visibility]);
    expect(workers).toEqual([worker, worker]);
    expect(visibility).toBe(6 * worker);
  });

  it("quotes the webhook queue's visibility timeout and the dispatcher's timeout as packaged", () => {
    // Prepare
    const [visibility, dispatcher] = quoted(
      'docs/deploying.md',
      /webhook queue's is (\d+) s, six times the dispatcher's timeout \((\d+) s\)/,
    );
    // Act / Assess
    expect(properties('WebhookQueue').VisibilityTimeout).toBe(visibility);
    expect(lambdaTimeout('WebhookDispatcher')).toBe(dispatcher);
  });

  it("quotes the dead-letter queues' retention, the queues' maxReceiveCount and the batching window as packaged", () => {
    // Prepare
    const [days, receives] = quoted('docs/deploying.md', /\((\d+) days' retention, `maxReceiveCount` (\d+),/);
    const [window] = quoted('docs/deploying.md', /a (\d+) s batching window/);
    // Act
    const retention = ['SalesRegistrationDeadLetterQueue', 'CaseDeadLetterQueue'].map(
      (id) => properties(id).MessageRetentionPeriod,
    );
    const redrive = ['SalesRegistrationQueue', 'CaseQueue'].map(
      (id) => (properties(id).RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount,
    );
    const windows = [
      'ErpDeliveryEventSourceMappingSQSSalesRegistrationQueue',
      'CrmDeliveryEventSourceMappingSQSCaseQueue',
    ].map((id) => properties(id).MaximumBatchingWindowInSeconds);
    // Assess
    expect(retention).toEqual([days * 86_400, days * 86_400]);
    expect(redrive).toEqual([receives, receives]);
    expect(windows).toEqual([window, window]);
  });
});

/** `dealer-gateway/<any stage>/` as `dealer-gateway/<stage>/`: the guides write `prod` or `<stage>`, the package `ci`. */
const anyStage = (name: string) => name.replace(/dealer-gateway\/[^/]+\//, 'dealer-gateway/<stage>/');

/**
 * The secrets a template reads, one line each: every dynamic reference CloudFormation resolves at deploy
 * (`{{resolve:secretsmanager:<secret>:SecretString:<key>}}`, `{{resolve:ssm-secure:<parameter>}}`) and every
 * Secrets Manager secret and SSM parameter a role may read at run time (its ARN in a grant).
 */
const secretsOfTemplate = (text: string): string[] => [
  ...[...text.matchAll(/\{\{resolve:secretsmanager:([^:}]+)(?::SecretString:([^:}]+))?[^}]*\}\}/g)].flatMap(
    ([, secret, key]) => [`secret ${secret}`, ...(key ? [`secret ${secret}, key ${key}`] : [])],
  ),
  ...[...text.matchAll(/\{\{resolve:ssm-secure:([^:}]+)[^}]*\}\}/g)].map(([, name]) => `parameter ${name}`),
  ...[...text.matchAll(/:secretsmanager:[^"]*?:secret:([^"]+?)-\?{6}/g)].map(
    ([, secret]) => `secret ${secret}`,
  ),
  ...[...text.matchAll(/:ssm:[^"]*?:parameter(\/[^"]+)/g)].map(([, name]) => `parameter ${name}`),
];

/**
 * What a guide's shell commands make, in the lines of {@link secretsOfTemplate}: `aws ssm put-parameter --name`,
 * `aws secretsmanager create-secret --name … --secret-string '<JSON>'` (the secret and each key of its JSON) and
 * `npm run webhook-secret -- rotate <client> --stage <stage>` (the client's webhook secret, as the tool names it).
 */
const secretsOfGuide = (file: string): string[] => {
  const commands = [
    ...readFileSync(join(projectRoot, file), 'utf8').matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g),
  ]
    .map(([, block]) => block.replace(/\\\n\s*/g, ' '))
    .join('\n');
  return [
    ...[...commands.matchAll(/aws ssm put-parameter .*--name (\S+)/g)].map(([, name]) => `parameter ${name}`),
    ...[
      ...commands.matchAll(/aws secretsmanager create-secret --name (\S+) .*--secret-string '([^']*)'/g),
    ].flatMap(([, secret, json]) => [
      `secret ${secret}`,
      ...Object.keys(JSON.parse(json)).map((key) => `secret ${secret}, key ${key}`),
    ]),
    ...[...commands.matchAll(/npm run webhook-secret -- rotate (\S+) --stage (\S+)/g)].map(
      ([, client, stage]) => `secret ${webhookSecretName(stage, client)}`,
    ),
  ];
};

/** Each line once, sorted, with the stage left out. */
const distinct = (lines: string[]) => [...new Set(lines.map(anyStage))].sort();

describe('docs/deploying.md, the secrets made once per stage', () => {
  it('makes every secret, API key and parameter the packaged template reads, and nothing else', () => {
    // Prepare
    const read = distinct(secretsOfTemplate(JSON.stringify(template)));
    // Act
    const made = distinct(secretsOfGuide('docs/deploying.md'));
    // Assess: each client's key (test clients too), each webhook client's secret, the three parameters.
    expect(read).toContain('secret dealer-gateway/<stage>/api-keys, key example-dealer-test');
    expect(read).toContain('secret dealer-gateway/<stage>/webhooks/example-dealer-test');
    expect(read).toContain('parameter /dealer-gateway/<stage>/intake/content-id-key');
    expect(made).toEqual(read);
  });

  it("rotates the webhook secret of every client with a webhook in config/clients.json (the dispatcher's grants)", () => {
    // Prepare
    const webhookClients = clientsConfig.clients.filter((c) => c.webhook).map((c) => c.name);
    // Act
    const rotated = distinct(secretsOfGuide('docs/deploying.md')).filter((line) =>
      line.includes('/webhooks/'),
    );
    // Assess
    expect(webhookClients.length).toBeGreaterThan(1);
    expect(rotated).toEqual(
      distinct(webhookClients.map((client) => `secret ${webhookSecretName('ci', client)}`)),
    );
  });
});

/** `GET /openapi.json` of an API Gateway method: its verb and its resource's path, parent by parent. */
const routeOf = (method: Record<string, unknown>): string => {
  const parts: string[] = [];
  let resource = method.ResourceId as { Ref?: string } | undefined;
  while (resource?.Ref) {
    const props = properties(resource.Ref);
    parts.unshift(String(props.PathPart));
    resource = props.ParentId as { Ref?: string };
  }
  return `${method.HttpMethod} /${parts.join('/')}`;
};

describe('deploy/README.md, "Client keys"', () => {
  it('makes the key secret with an entry for every key the packaged template resolves from it', () => {
    // Prepare
    const keys = (lines: string[]) => distinct(lines).filter((line) => line.includes(', key '));
    // Act / Assess
    expect(keys(secretsOfGuide('deploy/README.md'))).toEqual(
      keys(secretsOfTemplate(JSON.stringify(template))),
    );
  });

  it('names every route API Gateway serves without a key, as packaged', () => {
    // Prepare: the guide names its exceptions to `private: true` (POST /crm/case only while browser forms are on).
    const text = guide('deploy/README.md');
    const exceptions = [...text.matchAll(/\| Routes \|[^|]*\|/g)].flatMap((row) =>
      [...row[0].matchAll(/`((?:GET|POST) \/[^`]+)`/g)].map((m) => m[1]),
    );
    // Act
    const keyless = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::ApiGateway::Method' && r.Properties.HttpMethod !== 'OPTIONS')
      .filter((r) => r.Properties.ApiKeyRequired !== true)
      .map((r) => routeOf(r.Properties));
    // Assess
    expect(exceptions).toContain('GET /openapi.json');
    expect(keyless.filter((route) => !exceptions.includes(route))).toEqual([]);
    expect(keyless).toContain('GET /openapi.json');
  });
});

/** The region `osls print` resolves for a stage, with these AWS variables and none of this process's. */
const regionWith = async (variables: Record<string, string>): Promise<string> => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [oslsScript, 'print', '--stage', 'ci', '--format', 'json', '--path', 'provider.region'],
    { cwd: projectRoot, env: { ...env, ...variables }, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout.slice(stdout.search(/["{]/)));
};

describe('docs/deploying.md, the deploy command', () => {
  it('deploys to the region of AWS_REGION, else AWS_DEFAULT_REGION, else eu-west-1, as it says', async () => {
    // Prepare
    const sentence = quoted(
      'docs/deploying.md',
      /the region: --region, else AWS_REGION, else AWS_DEFAULT_REGION \(as the AWS CLI reads them\), else eu-west-(\d)/,
    );
    // Act
    const [both, defaultOnly, neither] = await Promise.all([
      regionWith({ AWS_REGION: 'ap-southeast-2', AWS_DEFAULT_REGION: 'eu-central-1' }),
      regionWith({ AWS_DEFAULT_REGION: 'eu-central-1' }),
      regionWith({}),
    ]);
    // Assess
    expect(sentence).toEqual([1]);
    expect([both, defaultOnly, neither]).toEqual(['ap-southeast-2', 'eu-central-1', 'eu-west-1']);
  }, 60_000);
});
