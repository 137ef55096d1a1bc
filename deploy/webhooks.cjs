// The clients' webhooks on AWS, generated from config/clients.json: for each client with a `webhook`, an EventBridge
// rule on the stack's bus that matches only that client's `Record state changed` events and sends them to an API
// destination (POST to the client's https URL, the client's secret in the X-Dealer-Gateway-Secret header), with
// EventBridge's retries and a dead-letter queue of its own. serverless.yml merges this into `resources`
// (`${file(./deploy/webhooks.cjs)}`); the tests call `generate` directly.
//
// The secret's VALUE is never in the template: the connection's ApiKeyValue is a CloudFormation dynamic reference
// to the client's Secrets Manager secret, resolved at deploy time.
'use strict';

const clientsConfig = require('../config/clients.json');
const {
  DEFAULT_WEBHOOK_RATE_LIMIT,
  isLocalWebhookUrl,
  webhookProblem,
} = require('../lib/clients/webhookRules.cjs');

/** npm start's stage: there the local event bus delivers the webhooks itself (no API destinations). */
const LOCAL_STAGE = 'local';

// The same values as lib/events/constants.ts (tests/deploy/webhooks.test.ts checks that they agree): this file
// runs under the serverless CLI's Node, which cannot import TypeScript.
const EVENT_SOURCE = 'dealer-gateway';
const RECORD_STATE_CHANGED = 'Record state changed';
const WEBHOOK_SECRET_HEADER = 'X-Dealer-Gateway-Secret';

/** EventBridge's maximum retry window (24 h) and attempts: a webhook down for a day loses nothing. */
const RETRY_POLICY = { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 };

/** 14 days, SQS's maximum: time to find out why a webhook refused events, and to send them again. */
const DEAD_LETTER_RETENTION_SECONDS = 1209600;

/** SQS's limit for a queue name. */
const MAX_QUEUE_NAME = 80;

const fail = (what) => {
  throw new Error(`config/clients.json: ${what}`);
};

/** `example-dealer` -> `ExampleDealer`, for logical ids (deploy/apiKeys.cjs refuses names too alike for this). */
const pascalName = (client) =>
  client.replace(/(^|-+)([a-z0-9])/g, (_, __, c) => c.toUpperCase()).replace(/-+$/, '');

/**
 * The logical ids of one client's webhook resources.
 *
 * @example
 * webhookIds('example-dealer').rule // 'ExampleDealerWebhookRule'
 */
const webhookIds = (client) => {
  const prefix = `${pascalName(client)}Webhook`;
  return {
    connection: `${prefix}Connection`,
    destination: `${prefix}Destination`,
    rule: `${prefix}Rule`,
    deadLetters: `${prefix}DeadLetterQueue`,
    deadLettersPolicy: `${prefix}DeadLetterQueuePolicy`,
    alarm: `${prefix}DeadLettersAlarm`,
  };
};

/** The role EventBridge assumes to invoke the API destinations (one for all, scoped to exactly those). */
const INVOKE_ROLE = 'WebhookInvokeRole';

/**
 * The clients with a webhook, checked (the rules of lib/clients/webhookRules.cjs), for a stage. Every stage but
 * `local` deploys API destinations, which AWS calls over the internet: a localhost URL cannot work there.
 *
 * @example
 * webhookClients(require('../config/clients.json'), { service: 'dealer-gateway', stage: 'prod' }).map((c) => c.name)
 * // ['example-dealer']
 */
const webhookClients = (config, { service, stage }) => {
  const clients = config.clients.filter((client) => client.webhook !== undefined);
  for (const client of clients) {
    const problem = webhookProblem(client);
    if (problem) fail(problem);
    if (stage !== LOCAL_STAGE && isLocalWebhookUrl(client.webhook.url))
      fail(
        `client "${client.name}": webhook.url "${client.webhook.url}" is for npm start only: stage "${stage}" delivers ` +
          'through an EventBridge API destination, which needs a public https:// URL',
      );
    const queueName = `${service}-${stage}-${client.name}-webhook-dlq`;
    if (queueName.length > MAX_QUEUE_NAME)
      fail(
        `client "${client.name}": its webhook dead-letter queue name ${queueName} is longer than 80 characters`,
      );
  }
  return clients;
};

/** The dynamic reference CloudFormation resolves at deploy time to the client's webhook secret (a plain string). */
const secretReference = (secretName) => `{{resolve:secretsmanager:${secretName}:SecretString}}`;

const arnOf = (id) => ({ 'Fn::GetAtt': [id, 'Arn'] });

/** One client's connection, destination, rule, dead-letter queue and its policy. */
const clientResources = (client, { service, stage }) => {
  const ids = webhookIds(client.name);
  const { url, secretName, rateLimitPerSecond = DEFAULT_WEBHOOK_RATE_LIMIT } = client.webhook;
  return {
    [ids.connection]: {
      Type: 'AWS::Events::Connection',
      Properties: {
        Description: `Webhook of client ${client.name}: its secret in the ${WEBHOOK_SECRET_HEADER} header`,
        AuthorizationType: 'API_KEY',
        AuthParameters: {
          ApiKeyAuthParameters: {
            ApiKeyName: WEBHOOK_SECRET_HEADER,
            ApiKeyValue: secretReference(secretName),
          },
        },
      },
    },
    [ids.destination]: {
      Type: 'AWS::Events::ApiDestination',
      Properties: {
        Description: `Webhook of client ${client.name}`,
        ConnectionArn: arnOf(ids.connection),
        HttpMethod: 'POST',
        InvocationEndpoint: url,
        InvocationRateLimitPerSecond: rateLimitPerSecond,
      },
    },
    [ids.rule]: {
      Type: 'AWS::Events::Rule',
      Properties: {
        Description: `State changes of client ${client.name}'s records, to its webhook`,
        EventBusName: { Ref: 'EventBus' },
        // Only this client's events: a client never sees another's records.
        EventPattern: {
          source: [EVENT_SOURCE],
          'detail-type': [RECORD_STATE_CHANGED],
          detail: { client: [client.name] },
        },
        State: 'ENABLED',
        Targets: [
          {
            Id: 'webhook',
            Arn: arnOf(ids.destination),
            RoleArn: arnOf(INVOKE_ROLE),
            RetryPolicy: { ...RETRY_POLICY },
            DeadLetterConfig: { Arn: arnOf(ids.deadLetters) },
          },
        ],
      },
    },
    [ids.deadLetters]: {
      Type: 'AWS::SQS::Queue',
      Properties: {
        QueueName: `${service}-${stage}-${client.name}-webhook-dlq`,
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: DEAD_LETTER_RETENTION_SECONDS,
      },
    },
    [ids.deadLettersPolicy]: {
      Type: 'AWS::SQS::QueuePolicy',
      Properties: {
        Queues: [{ Ref: ids.deadLetters }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'EventBridgeDeadLettersOfThisRuleOnly',
              Effect: 'Allow',
              Principal: { Service: 'events.amazonaws.com' },
              Action: 'sqs:SendMessage',
              Resource: arnOf(ids.deadLetters),
              Condition: { ArnEquals: { 'aws:SourceArn': arnOf(ids.rule) } },
            },
          ],
        },
      },
    },
  };
};

/**
 * The CloudFormation resources of every client's webhook, for one service and stage (none for stage `local`,
 * where npm start's local event bus delivers them, and none when no client has a webhook).
 *
 * @example
 * Object.keys(generate(require('../config/clients.json'), { service: 'dealer-gateway', stage: 'prod' }).Resources)
 * // ['WebhookInvokeRole', 'ExampleDealerWebhookConnection', 'ExampleDealerWebhookDestination', ...]
 */
const generate = (config, { service, stage }) => {
  const clients = webhookClients(config, { service, stage });
  if (stage === LOCAL_STAGE || clients.length === 0) return { Resources: {} };
  const resources = {
    [INVOKE_ROLE]: {
      Type: 'AWS::IAM::Role',
      Properties: {
        AssumeRolePolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            { Effect: 'Allow', Principal: { Service: 'events.amazonaws.com' }, Action: 'sts:AssumeRole' },
          ],
        },
        Policies: [
          {
            PolicyName: 'invokeWebhooks',
            PolicyDocument: {
              Version: '2012-10-17',
              Statement: [
                {
                  Effect: 'Allow',
                  Action: ['events:InvokeApiDestination'],
                  Resource: clients.map((client) => arnOf(webhookIds(client.name).destination)),
                },
              ],
            },
          },
        ],
      },
    },
  };
  for (const client of clients) Object.assign(resources, clientResources(client, { service, stage }));
  return { Resources: resources };
};

module.exports = async ({ resolveVariable }) =>
  generate(clientsConfig, {
    service: await resolveVariable('self:service'),
    stage: await resolveVariable('sls:stage'),
  });
module.exports.generate = generate;
module.exports.webhookClients = webhookClients;
module.exports.webhookIds = webhookIds;
module.exports.constants = {
  EVENT_SOURCE,
  RECORD_STATE_CHANGED,
  WEBHOOK_SECRET_HEADER,
  RETRY_POLICY,
  LOCAL_STAGE,
};
