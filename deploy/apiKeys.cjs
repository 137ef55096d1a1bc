// Client keys, usage plans, private routes, browser forms and API Gateway's own error answers, generated from
// config/clients.json so that the deployed API and the handlers read one list of clients. serverless.yml
// resolves this file (`${file(./deploy/apiKeys.cjs):<part>}`); the tests call `generate` directly.
//
// Key VALUES are never in the template: each key is a CloudFormation dynamic reference to the Secrets Manager
// secret `<service>/<stage>/api-keys` ({"<client>": "<key>"}), the same secret the handlers check keys against.
'use strict';

const clientsConfig = require('../config/clients.json');
// The handlers check webhooks by the same rules (lib/clients/clientsConfig.ts): one rule set, two readers.
const { webhookProblem } = require('../lib/clients/webhookRules.cjs');

/** The stage the local runner uses: there the handlers read keys from API_KEYS_FILE, never Secrets Manager. */
const LOCAL_STAGE = 'local';

/** POST /crm/case is the one operation a web page may call without a key (when browser forms are enabled). */
const CASE_PATH = '/crm/case';

/** Headers a page's script may send with a case (a key is never one: a page cannot keep it secret). */
const CORS_HEADERS = ['Content-Type', 'Idempotency-Key'];

/** Seconds a throttled caller is told to wait (the handlers' 503 says the same). */
const RETRY_AFTER_SECONDS = 5;

const fail = (what) => {
  throw new Error(`config/clients.json: ${what}`);
};

/** `example-dealer` -> `exampleDealer`: osls builds logical ids from usage plan names, which allow no `-`. */
const planName = (client) => client.replace(/-+([a-z0-9])/g, (_, c) => c.toUpperCase());

const secretNameOf = (service, stage) => `${service}/${stage}/api-keys`;

/**
 * The dynamic reference CloudFormation resolves at deploy time to one client's key. It is resolved again only
 * when the ApiKey resource changes: after rotating a key in the secret, see docs/operations.md ("Clients and keys").
 */
const keyReference = (secretName, client) =>
  `{{resolve:secretsmanager:${secretName}:SecretString:${client}}}`;

const checkLimits = (where, throttle, quota) => {
  if (throttle !== undefined) {
    const { rateLimit, burstLimit } = throttle;
    if (!(rateLimit > 0) || !Number.isInteger(burstLimit) || burstLimit < 1)
      fail(`${where}: throttle needs rateLimit > 0 and an integer burstLimit >= 1`);
  }
  if (quota !== undefined) {
    if (!Number.isInteger(quota.limit) || quota.limit < 1 || !['DAY', 'WEEK', 'MONTH'].includes(quota.period))
      fail(`${where}: quota needs an integer limit >= 1 and a period of DAY, WEEK or MONTH`);
  }
};

// ---- API Gateway's own answers (missing or invalid key, throttling, quota) in the contract's shapes ----

/**
 * A gateway response body in the shape of the operation that was called: `crm/case` answers a JSON string
 * "Create Case failed: …", `erp/sales_registration` {"success": false, "message"}, the status look-ups (and
 * anything else) {"message"}. `message` is a fixed text or an API Gateway `$context` variable; never input.
 */
const shapedBody = (message) =>
  [
    `#if($context.resourcePath == "${CASE_PATH}")"Create Case failed: ${message}"`,
    `#elseif($context.resourcePath == "/erp/sales_registration"){"success":false,"message":"${message}"}`,
    `#{else}{"message":"${message}"}#{end}`,
  ].join('');

/** Response type -> status (undefined: keep API Gateway's) and reason. */
const gatewayAnswers = {
  INVALID_API_KEY: { status: '403', message: 'the x-api-key header must hold a valid API key' },
  // API Gateway's name for "no such route or method" (it has no missing-token check here).
  MISSING_AUTHENTICATION_TOKEN: { status: '404', message: 'there is no such operation' },
  ACCESS_DENIED: { status: '403', message: 'access denied' },
  THROTTLED: {
    status: '429',
    message: 'too many requests: retry after a short wait',
    headers: { 'Retry-After': `'${RETRY_AFTER_SECONDS}'` },
  },
  QUOTA_EXCEEDED: { status: '429', message: "the request quota of this client's key is used up for now" },
  REQUEST_TOO_LARGE: { status: '413', message: 'body is too large' },
  // Every other 4xx API Gateway answers itself keeps its status and its (fixed, quote-free) message.
  DEFAULT_4XX: { status: undefined, message: '$context.error.message' },
};

const gatewayResponses = () => {
  const resources = {};
  for (const [type, answer] of Object.entries(gatewayAnswers)) {
    const id = `GatewayResponse${type
      .toLowerCase()
      .split('_')
      .map((w) => w[0].toUpperCase() + w.slice(1))
      .join('')}`;
    const headers = {
      'Content-Type': "'application/json'",
      'Cache-Control': "'no-store'",
      ...answer.headers,
    };
    resources[id] = {
      Type: 'AWS::ApiGateway::GatewayResponse',
      Properties: {
        RestApiId: { Ref: 'ApiGatewayRestApi' },
        ResponseType: type,
        ...(answer.status ? { StatusCode: answer.status } : {}),
        ResponseParameters: Object.fromEntries(
          Object.entries(headers).map(([name, value]) => [`gatewayresponse.header.${name}`, value]),
        ),
        ResponseTemplates: { 'application/json': shapedBody(answer.message) },
      },
    };
  }
  return resources;
};

/**
 * Everything serverless.yml takes from the clients configuration, for one service and stage.
 *
 * @example
 * generate(require('../config/clients.json'), { service: 'dealer-gateway', stage: 'prod' }).caseRoute
 * // { private: true, cors: false } while browser forms are off
 */
const generate = (config, { service, stage }) => {
  const secretName = secretNameOf(service, stage);
  const plans = new Map();
  for (const client of config.clients) {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(client.name))
      fail(`client name "${client.name}" must be lower-case letters, digits and -`);
    const plan = planName(client.name);
    if (plans.has(plan)) fail(`clients "${plans.get(plan)}" and "${client.name}" are too alike`);
    plans.set(plan, client.name);
    checkLimits(`client "${client.name}"`, client.throttle, client.quota);
    const problem = webhookProblem(client);
    if (problem) fail(problem);
  }
  const forms = config.browserForms;
  const formsOn = Boolean(forms?.enabled);
  if (formsOn) {
    if (!forms.allowedOrigins?.length) fail('browserForms.enabled needs at least one allowed origin');
    if (!forms.throttle) fail('browserForms.enabled needs a throttle for key-less posts');
    checkLimits('browserForms', forms.throttle);
  }

  return {
    secretName,
    /** API_KEYS_SECRET of the handlers: none locally, where they read API_KEYS_FILE. */
    handlerSecret: stage === LOCAL_STAGE ? '' : secretName,
    /** provider.apiGateway.apiKeys: one key per client, in its own usage plan. */
    apiKeys: config.clients.map((client) => ({
      [planName(client.name)]: [
        {
          name: `${service}-${stage}-${client.name}`,
          value: keyReference(secretName, client.name),
          description: client.description ?? client.name,
        },
      ],
    })),
    /** provider.apiGateway.usagePlan: the client's throttle and quota. */
    usagePlan: config.clients.map((client) => ({
      [planName(client.name)]: {
        ...(client.throttle ? { throttle: { ...client.throttle } } : {}),
        ...(client.quota ? { quota: { ...client.quota } } : {}),
      },
    })),
    /**
     * POST /crm/case: private (key checked by API Gateway, usage plan applied) unless browser forms are on;
     * then key-less posts must reach the handler, which checks the key or the page's origin itself, and
     * API Gateway answers the CORS preflight for the allowed origins only.
     */
    caseRoute: {
      private: !formsOn,
      cors: formsOn
        ? {
            origins: [...forms.allowedOrigins],
            headers: [...CORS_HEADERS],
            allowCredentials: false,
            maxAge: 600,
          }
        : false,
    },
    /**
     * The stricter throttle for key-less posts, applied by deploy/apiGatewayPlugin.cjs as the stage's method
     * throttle of POST /crm/case after each deploy (null: no method throttle, any earlier one is removed).
     */
    caseMethodThrottle: formsOn ? { resourcePath: CASE_PATH, httpMethod: 'POST', ...forms.throttle } : null,
    /** CloudFormation resources: the gateway responses. */
    resources: { Resources: gatewayResponses() },
  };
};

module.exports = async ({ resolveVariable }) =>
  generate(clientsConfig, {
    service: await resolveVariable('self:service'),
    stage: await resolveVariable('sls:stage'),
  });
module.exports.generate = generate;
module.exports.keyReference = keyReference;
