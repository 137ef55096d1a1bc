/**
 * Client keys on AWS, read from the packaged CloudFormation template (`npm run package -- --stage ci`): one
 * usage plan per client of config/clients.json with its throttle and quota, its key bound to it, no key value
 * anywhere, every route requiring a key, API Gateway's own errors in the contract's shapes, and the handlers'
 * permission to read exactly the key secret. Then the same with browser forms enabled (a copy of the project).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { render } from 'velocityjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import clients from '../../config/clients.json' with { type: 'json' };
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { oslsScript, projectRoot } from '../../local/project.ts';
import { testKeys } from '../../testkit/apiKeys.ts';
import {
  packagedTemplate,
  type Resource,
  type Template,
  withPackageLock,
} from '../../testkit/packagedTemplate.ts';

const require = createRequire(import.meta.url);
const { generate } = require('../../deploy/apiKeys.cjs') as {
  generate: (config: ClientsConfig, at: { service: string; stage: string }) => Generated;
};
const ApiGatewayPlugin = require('../../deploy/apiGatewayPlugin.cjs') as {
  new (
    serverless: unknown,
    options: unknown,
    utils: unknown,
  ): { hooks: Record<string, () => unknown>; sdk: (name: string) => unknown };
  throttlePatch: (
    wanted: unknown,
    current?: Record<string, unknown>,
  ) => { op: string; path: string; value?: string }[];
  deploymentsAfterGatewayResponses: (template: Template) => Template;
};
const { throttlePatch, deploymentsAfterGatewayResponses } = ApiGatewayPlugin;

interface Generated {
  secretName: string;
  handlerSecret: string;
  apiKeys: Record<string, { name: string; value: string }[]>[];
  usagePlan: Record<string, unknown>[];
  caseRoute: { private: boolean; cors: false | { origins: string[]; headers: string[] } };
  caseMethodThrottle: null | {
    resourcePath: string;
    httpMethod: string;
    rateLimit: number;
    burstLimit: number;
  };
  resources: { Resources: Record<string, Resource> };
}

const config = clients as ClientsConfig;
const SECRET = 'dealer-gateway/ci/api-keys';
/**
 * The methods API Gateway serves without a key whatever browser forms say: the public API description, and the
 * console API, whose handler lets in only a person's valid ID token (`Authorization: Bearer`).
 */
const KEYLESS = [
  'ApiGatewayMethodOpenapijsonGet',
  'ApiGatewayMethodConsoleApiProxyVarGet',
  'ApiGatewayMethodConsoleApiProxyVarPost',
  // The console's page and files (consoleAssets): public code without data.
  'ApiGatewayMethodConsoleGet',
  'ApiGatewayMethodConsoleCallbackGet',
  'ApiGatewayMethodConsoleAssetsFileVarGet',
];
const SECRET_ARN = `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${SECRET}-??????`;

let template: Template;
let packageDir: string;
const resources = () => template.Resources;
const ofType = (type: string, from = resources()) => Object.entries(from).filter(([, r]) => r.Type === type);
const getAtt = (value: unknown) => (value as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
const statementsOf = (roleId: string) =>
  (
    resources()[roleId].Properties.Policies as {
      PolicyDocument: { Statement: { Action: string[]; Resource: unknown[] }[] };
    }[]
  ).flatMap((p) => p.PolicyDocument.Statement);

beforeAll(async () => {
  ({ template, dir: packageDir } = await packagedTemplate());
}, 180_000);

afterAll(() => rm(packageDir, { recursive: true, force: true }));

/** A gateway response body as API Gateway renders it for a call of `resourcePath`. */
const renderGatewayResponse = (response: Resource, resourcePath: string) =>
  JSON.parse(
    render((response.Properties.ResponseTemplates as Record<string, string>)['application/json'], {
      context: { resourcePath, error: { message: 'Unsupported Media Type', messageString: '"x"' } },
    }),
  ) as unknown;

describe('client keys in the packaged template', () => {
  const keys = () => ofType('AWS::ApiGateway::ApiKey');
  const plans = () => ofType('AWS::ApiGateway::UsagePlan');
  const bindings = () => ofType('AWS::ApiGateway::UsagePlanKey');
  const keyOf = (client: string) =>
    keys().find(([, k]) => k.Properties.Name === `dealer-gateway-ci-${client}`);

  it('gives every client of config/clients.json one usage plan with its throttle and quota', () => {
    expect(plans()).toHaveLength(config.clients.length);
    for (const client of config.clients) {
      const [keyId] = keyOf(client.name) ?? [];
      expect(keyId, client.name).toBeDefined();
      const bound = bindings().filter(([, b]) => (b.Properties.KeyId as { Ref: string }).Ref === keyId);
      expect(bound, client.name).toHaveLength(1);
      const planId = (bound[0][1].Properties.UsagePlanId as { Ref: string }).Ref;
      const plan = resources()[planId].Properties;
      expect(plan.Throttle).toEqual({
        RateLimit: client.throttle?.rateLimit,
        BurstLimit: client.throttle?.burstLimit,
      });
      expect(plan.Quota).toEqual({ Limit: client.quota?.limit, Period: client.quota?.period });
      expect(plan.ApiStages).toEqual([{ ApiId: { Ref: 'ApiGatewayRestApi' }, Stage: 'ci' }]);
    }
  });

  it('binds one enabled key per client to its plan, and no other key', () => {
    expect(keys()).toHaveLength(config.clients.length);
    expect(bindings()).toHaveLength(config.clients.length);
    for (const [, binding] of bindings()) expect(binding.Properties.KeyType).toBe('API_KEY');
    for (const client of config.clients) {
      const [, key] = keyOf(client.name) ?? [];
      expect(key?.Properties.Enabled).toBe(true);
      expect(key?.Properties.StageKeys).toEqual([
        { RestApiId: { Ref: 'ApiGatewayRestApi' }, StageName: 'ci' },
      ]);
    }
  });

  it('holds no key value: each key is a dynamic reference to its entry of the key secret', () => {
    for (const client of config.clients) {
      expect(keyOf(client.name)?.[1].Properties.Value).toBe(
        `{{resolve:secretsmanager:${SECRET}:SecretString:${client.name}}}`,
      );
    }
    const text = JSON.stringify(template);
    for (const value of Object.values(testKeys)) expect(text).not.toContain(value);
    expect(text).not.toMatch(/"Value":\s*"(?!\{\{resolve:secretsmanager:)[^"]{20,}"/);
  });

  it("requires a key at API Gateway on every operation (browser forms are off by default); the API description, the console API (bearer ID tokens) and the console's page and files are not", () => {
    expect(config.browserForms.enabled).toBe(false);
    const methods = ofType('AWS::ApiGateway::Method');
    expect(methods.length).toBeGreaterThanOrEqual(5);
    for (const [id, method] of methods) {
      expect(method.Properties.HttpMethod, id).not.toBe('OPTIONS');
      expect(Boolean(method.Properties.ApiKeyRequired), id).toBe(!KEYLESS.includes(id));
    }
  });

  it("answers API Gateway's own refusals in each operation's contract shape", () => {
    const responses = Object.fromEntries(
      ofType('AWS::ApiGateway::GatewayResponse').map(([, r]) => [r.Properties.ResponseType as string, r]),
    );
    expect(Object.keys(responses).sort()).toEqual(
      [
        'ACCESS_DENIED',
        'DEFAULT_4XX',
        'INVALID_API_KEY',
        'MISSING_AUTHENTICATION_TOKEN',
        'QUOTA_EXCEEDED',
        'REQUEST_TOO_LARGE',
        'THROTTLED',
      ].sort(),
    );
    const statuses = Object.fromEntries(
      Object.entries(responses).map(([t, r]) => [t, r.Properties.StatusCode]),
    );
    expect(statuses).toMatchObject({
      INVALID_API_KEY: '403',
      ACCESS_DENIED: '403',
      THROTTLED: '429',
      QUOTA_EXCEEDED: '429',
    });
    for (const [type, response] of Object.entries(responses)) {
      expect(response.Properties.RestApiId, type).toEqual({ Ref: 'ApiGatewayRestApi' });
      expect(response.Properties.ResponseParameters, type).toMatchObject({
        'gatewayresponse.header.Content-Type': "'application/json'",
      });
      const message = expect.stringMatching(/\S/);
      expect(renderGatewayResponse(response, '/crm/case'), type).toEqual(
        expect.stringMatching(/^Create Case failed: \S/),
      );
      expect(renderGatewayResponse(response, '/erp/sales_registration'), type).toEqual({
        success: false,
        message,
      });
      for (const path of ['/erp/sales_registration/{id}', '/crm/case/{CrmId}', '/openapi.json', '']) {
        expect(renderGatewayResponse(response, path), `${type} ${path}`).toEqual({ message });
      }
    }
    expect(renderGatewayResponse(responses.INVALID_API_KEY, '/crm/case')).toMatch(/x-api-key/);
    expect(responses.THROTTLED.Properties.ResponseParameters).toMatchObject({
      'gatewayresponse.header.Retry-After': expect.stringMatching(/^'\d+'$/),
    });
  });

  it('publishes the gateway responses with every deployment of the API', () => {
    const responseIds = ofType('AWS::ApiGateway::GatewayResponse').map(([id]) => id);
    const [[, deployment]] = ofType('AWS::ApiGateway::Deployment');
    expect(deployment.DependsOn).toEqual(expect.arrayContaining(responseIds));
  });

  it('lets exactly the intake, status and event feed functions read exactly the key secret, and the webhook signers only webhook secrets', () => {
    const byFunction = Object.fromEntries(
      ofType('AWS::Lambda::Function').map(([id, fn]) => [id.replace(/LambdaFunction$/, ''), fn]),
    );
    const readers = ['SalesRegistration', 'CrmCase', 'RecordStatus', 'EventFeed'];
    for (const [name, fn] of Object.entries(byFunction)) {
      const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
        ?.Variables;
      const secretStatements = statementsOf(getAtt(fn.Properties.Role)).filter((s) =>
        s.Action.some((a) => a.startsWith('secretsmanager:')),
      );
      if (readers.includes(name)) {
        expect(variables?.API_KEYS_SECRET, name).toBe(SECRET);
        expect(secretStatements, name).toEqual([
          {
            Effect: 'Allow',
            Action: ['secretsmanager:GetSecretValue'],
            Resource: [{ 'Fn::Sub': SECRET_ARN }],
          },
        ]);
        expect(JSON.stringify(secretStatements)).not.toContain('*');
      } else if (name === 'WebhookDispatcher' || name === 'ConsoleApi') {
        // They read the clients' webhook secrets (dealer-gateway/<stage>/webhooks/<client>: the dispatcher signs with
        // them, the console's "Resend webhook" too), never the key secret.
        expect(variables?.API_KEYS_SECRET, name).toBeUndefined();
        expect(JSON.stringify(secretStatements), name).toContain(':secret:dealer-gateway/ci/webhooks/');
        expect(JSON.stringify(secretStatements), name).not.toContain('api-keys');
      } else {
        expect(variables?.API_KEYS_SECRET, name).toBeUndefined();
        expect(secretStatements, name).toEqual([]);
      }
    }
  });
});

describe('browser forms enabled: the packaged template of a project copy', () => {
  const origins = ['https://www.example.com', 'https://forms.example.org'];
  let enabled: Template;
  let copy: string;

  beforeAll(async () => {
    // The copy packages as the project does: packaging bundles every function first (deploy/bundlePlugin.cjs), so
    // the copy holds what bundling reads (under the lock, so nobody rebuilds the project's bundles meanwhile).
    enabled = await withPackageLock(async () => {
      copy = await mkdtemp(join(tmpdir(), 'dealer-gateway-forms-package-'));
      const sources = [
        'console',
        'functions',
        'lib',
        'schemas',
        'scripts',
        'tools',
        'local',
        'sandbox',
        'openapi.json',
        'tsconfig.json',
      ];
      for (const entry of ['serverless.yml', 'package.json', 'deploy', 'config', '.esbuild', ...sources]) {
        await cp(join(projectRoot, entry), join(copy, entry), {
          recursive: true,
          filter: (source) => !source.includes('/.esbuild/') || source.endsWith('.zip'),
        });
      }
      await symlink(join(projectRoot, 'node_modules'), join(copy, 'node_modules'), 'dir');
      const forms: ClientsConfig = {
        ...config,
        browserForms: { enabled: true, allowedOrigins: origins, throttle: { rateLimit: 2, burstLimit: 4 } },
      };
      await writeFile(join(copy, 'config', 'clients.json'), JSON.stringify(forms));
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
      await promisify(execFile)(
        process.execPath,
        [oslsScript, 'package', '--stage', 'ci', '--package', 'out'],
        {
          cwd: copy,
          env,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      expect((await readdir(join(copy, '.esbuild'))).length).toBeGreaterThan(0);
      return JSON.parse(
        await readFile(join(copy, 'out', 'cloudformation-template-update-stack.json'), 'utf8'),
      );
    });
  }, 120_000);

  afterAll(() => (copy ? rm(copy, { recursive: true, force: true }) : undefined));

  const method = (logicalId: string) => enabled.Resources[logicalId].Properties;

  it('lets key-less posts reach crm/case, and nothing else but the API description', () => {
    for (const [id, m] of ofType('AWS::ApiGateway::Method', enabled.Resources)) {
      const expected = ![
        'ApiGatewayMethodCrmCasePost',
        'ApiGatewayMethodCrmCaseOptions',
        ...KEYLESS,
      ].includes(id);
      expect(Boolean(m.Properties.ApiKeyRequired), id).toBe(expected);
    }
  });

  it('answers the preflight of crm/case with the requesting origin only when it is allowed', () => {
    const options = method('ApiGatewayMethodCrmCaseOptions');
    expect(options.AuthorizationType).toBe('NONE');
    const [integration] = (
      options.Integration as {
        IntegrationResponses: {
          ResponseParameters: Record<string, string>;
          ResponseTemplates: Record<string, string>;
        }[];
      }
    ).IntegrationResponses;
    expect(integration.ResponseParameters['method.response.header.Access-Control-Allow-Methods']).toContain(
      'POST',
    );
    expect(integration.ResponseParameters['method.response.header.Access-Control-Allow-Headers']).toContain(
      'Content-Type',
    );
    expect(
      integration.ResponseParameters['method.response.header.Access-Control-Allow-Credentials'],
    ).toBeUndefined();
    // The mapping template overrides the header with the request's Origin when it is one of the allowed.
    const overridden = (origin: string) => {
      const context: { responseOverride: { header: Record<string, string> } } = {
        responseOverride: { header: {} },
      };
      // API Gateway's VTL strings are Java strings: `matches` is a whole-string regular expression match.
      const javaString = Object.assign(new String(origin), {
        matches: (pattern: string) => new RegExp(`^(?:${pattern})$`).test(origin),
      });
      render(integration.ResponseTemplates['application/json'], {
        input: { params: (name: string) => (name.toLowerCase() === 'origin' ? javaString : '') },
        context,
      });
      const header = context.responseOverride.header['Access-Control-Allow-Origin'];
      return header === undefined ? undefined : String(header);
    };
    expect(overridden('https://forms.example.org')).toBe('https://forms.example.org');
    expect(overridden('https://evil.example.net')).toBeUndefined();
    expect(overridden('https://forms.example.org.evil.net')).toBeUndefined();
    expect(origins).toContain(
      integration.ResponseParameters['method.response.header.Access-Control-Allow-Origin'].replaceAll(
        "'",
        '',
      ),
    );
  });

  it('keeps every client plan and key, and still holds no key value', () => {
    expect(ofType('AWS::ApiGateway::UsagePlan', enabled.Resources)).toHaveLength(config.clients.length);
    for (const [, key] of ofType('AWS::ApiGateway::ApiKey', enabled.Resources)) {
      expect(String(key.Properties.Value)).toMatch(
        /^\{\{resolve:secretsmanager:dealer-gateway\/ci\/api-keys:/,
      );
    }
  });
});

describe('deploy/apiKeys.cjs', () => {
  const at = { service: 'dealer-gateway', stage: 'prod' };
  const withForms = (browserForms: Partial<ClientsConfig['browserForms']>): ClientsConfig => ({
    ...config,
    browserForms: { ...config.browserForms, ...browserForms },
  });

  it('keeps crm/case private and sets no method throttle while browser forms are off', () => {
    const out = generate(config, at);
    expect(out.caseRoute).toEqual({ private: true, cors: false });
    expect(out.caseMethodThrottle).toBeNull();
    expect(out.secretName).toBe('dealer-gateway/prod/api-keys');
    expect(out.handlerSecret).toBe('dealer-gateway/prod/api-keys');
  });

  it('opens crm/case with CORS for the allowed origins and the stricter key-less throttle when on', () => {
    const out = generate(withForms({ enabled: true, allowedOrigins: ['https://a.example'] }), at);
    expect(out.caseRoute.private).toBe(false);
    expect(out.caseRoute.cors).toMatchObject({ origins: ['https://a.example'], allowCredentials: false });
    expect(JSON.stringify(out.caseRoute.cors).toLowerCase()).not.toContain('x-api-key');
    expect(out.caseMethodThrottle).toEqual({
      resourcePath: '/crm/case',
      httpMethod: 'POST',
      ...config.browserForms.throttle,
    });
  });

  it('leaves the local stage on its key file (no secret for the handlers)', () => {
    expect(generate(config, { ...at, stage: 'local' }).handlerSecret).toBe('');
  });

  it.each([
    [
      'a throttle without a rate',
      (c: ClientsConfig) => Object.assign(c.clients[0], { throttle: { burstLimit: 1 } }),
    ],
    [
      'a quota period API Gateway does not know',
      (c: ClientsConfig) => Object.assign(c.clients[0], { quota: { limit: 1, period: 'YEAR' } }),
    ],
    [
      'two clients whose plan names collide',
      (c: ClientsConfig) => c.clients.push({ ...c.clients[0], name: 'example--dealer' }),
    ],
    [
      'browser forms on without origins',
      (c: ClientsConfig) => Object.assign(c.browserForms, { enabled: true, allowedOrigins: [] }),
    ],
    [
      'browser forms on without a throttle',
      (c: ClientsConfig) => Object.assign(c.browserForms, { enabled: true, throttle: undefined }),
    ],
  ])('refuses %s', (_label, spoil) => {
    const spoilt = structuredClone(config);
    spoil(spoilt);
    expect(() => generate(spoilt, at)).toThrow(/config\/clients\.json/);
  });
});

describe('deploy/apiGatewayPlugin.cjs', () => {
  it('sets the method throttle of POST /crm/case after a deploy with browser forms on', () => {
    expect(
      throttlePatch({ resourcePath: '/crm/case', httpMethod: 'POST', rateLimit: 1, burstLimit: 5 }),
    ).toEqual([
      { op: 'replace', path: '/~1crm~1case/POST/throttling/rateLimit', value: '1' },
      { op: 'replace', path: '/~1crm~1case/POST/throttling/burstLimit', value: '5' },
    ]);
  });

  it('removes a method throttle left from earlier when browser forms are off, and does nothing otherwise', () => {
    expect(throttlePatch(null, { '~1crm~1case/POST': { throttlingRateLimit: 1 } })).toEqual([
      { op: 'remove', path: '/~1crm~1case/POST/throttling/rateLimit' },
      { op: 'remove', path: '/~1crm~1case/POST/throttling/burstLimit' },
    ]);
    expect(throttlePatch(null, {})).toEqual([]);
    expect(throttlePatch(null, { '*/*': { throttlingRateLimit: 100 } })).toEqual([]);
  });

  it('applies the throttle to the stage of the deployed stack after `deploy`', async () => {
    const sent: { command: string; input: unknown }[] = [];
    const client = (answers: Record<string, unknown>) =>
      class {
        async send(command: { constructor: { name: string }; input: unknown }) {
          sent.push({ command: command.constructor.name, input: command.input });
          return answers[command.constructor.name] ?? {};
        }
      };
    const command = (name: string) =>
      ({
        [name]: class {
          input: unknown;
          constructor(input: unknown) {
            this.input = input;
          }
        },
      })[name];
    const wanted = { resourcePath: '/crm/case', httpMethod: 'POST', rateLimit: 1, burstLimit: 5 };
    const plugin = new ApiGatewayPlugin(
      {
        getProvider: () => ({
          getAwsSdkV3Config: async () => ({ region: 'eu-west-1' }),
          naming: { getStackName: () => 'dealer-gateway-prod' },
          getApiGatewayStage: () => 'prod',
        }),
        service: { custom: { clients: { caseMethodThrottle: wanted } } },
        config: {},
      },
      {},
      {},
    );
    plugin.sdk = (name) =>
      name === '@aws-sdk/client-cloudformation'
        ? {
            CloudFormationClient: client({
              DescribeStackResourceCommand: { StackResourceDetail: { PhysicalResourceId: 'api123' } },
            }),
            DescribeStackResourceCommand: command('DescribeStackResourceCommand'),
          }
        : {
            APIGatewayClient: client({ GetStageCommand: { methodSettings: {} } }),
            GetStageCommand: command('GetStageCommand'),
            UpdateStageCommand: command('UpdateStageCommand'),
          };
    await plugin.hooks['after:deploy:deploy']();
    expect(sent).toEqual([
      {
        command: 'DescribeStackResourceCommand',
        input: { StackName: 'dealer-gateway-prod', LogicalResourceId: 'ApiGatewayRestApi' },
      },
      { command: 'GetStageCommand', input: { restApiId: 'api123', stageName: 'prod' } },
      {
        command: 'UpdateStageCommand',
        input: { restApiId: 'api123', stageName: 'prod', patchOperations: throttlePatch(wanted) },
      },
    ]);
  });

  it('makes every deployment depend on every gateway response, keeping what it depended on', () => {
    const out = deploymentsAfterGatewayResponses({
      Resources: {
        D: { Type: 'AWS::ApiGateway::Deployment', Properties: {}, DependsOn: 'M' },
        G: { Type: 'AWS::ApiGateway::GatewayResponse', Properties: {} },
      },
    });
    expect(out.Resources.D.DependsOn).toEqual(['M', 'G']);
  });
});
