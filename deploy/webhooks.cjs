// The clients' webhooks on AWS, generated from config/clients.json: per client with a webhook, one EventBridge rule
// on the stack's bus that matches the `Record state changed` events of that client and queues them on WebhookQueue
// (serverless.yml) with the client as MessageGroupId, whose dispatcher (functions/webhookDispatcher.ts) signs each
// per Standard Webhooks and posts it to that client's URL; and the queue's policy letting those rules alone send.
// A rule per client because an EventBridge SQS target names one static MessageGroupId (SqsParameters, which takes
// fair queues as well as FIFO ones): the group makes the standard queue a fair queue, so one client's backlog or
// slow receiver does not delay the others' webhooks (docs/design.md, "Events and webhooks": one client's slow receiver). EventBridge API destinations are not
// used: they cannot sign each body. serverless.yml merges this into `resources` (`${file(./deploy/webhooks.cjs)}`);
// the tests call `generate` directly.
'use strict';

const clientsConfig = require('../config/clients.json');
const { isLocalWebhookUrl, webhookProblem } = require('../lib/clients/webhookRules.cjs');

/** npm start's stage: the only one whose webhooks may be on this machine (its local bus routes by this rule too). */
const LOCAL_STAGE = 'local';

// The same values as lib/events/constants.ts (tests/deploy/webhooks.test.ts checks that they agree): this file
// runs under the serverless CLI's Node, which cannot import TypeScript.
const EVENT_SOURCE = 'dealer-gateway';
const RECORD_STATE_CHANGED = 'Record state changed';

/** The logical ids of the resources generated here and of the queue and dispatcher of serverless.yml. */
const IDS = {
  role: 'WebhookDispatcherRole',
  queuePolicy: 'WebhookQueuePolicy',
  queue: 'WebhookQueue',
  deadLetters: 'WebhookDeadLetterQueue',
};

const fail = (what) => {
  throw new Error(`config/clients.json: ${what}`);
};

/** `example-dealer` -> `ExampleDealer`, for logical ids (deploy/apiKeys.cjs refuses names too alike for this). */
const pascalName = (client) =>
  client.replace(/(^|-+)([a-z0-9])/g, (_, __, c) => c.toUpperCase()).replace(/-+$/, '');

/**
 * The logical ids of a client's webhook rule (here) and alarm (deploy/monitoring.cjs).
 *
 * @example
 * webhookIds('example-dealer') // { rule: 'ExampleDealerWebhookRule', alarm: 'ExampleDealerWebhookAlarm' }
 */
const webhookIds = (client) => ({
  rule: `${pascalName(client)}WebhookRule`,
  alarm: `${pascalName(client)}WebhookAlarm`,
});

/** EventBridge takes a target's MessageGroupId of at most 100 characters; a client's name has at most 63. */
const MAX_TARGET_GROUP_ID = 100;

/**
 * A client's rule: its `Record state changed` events, and no other client's, to the webhook queue with the client as
 * the message's group (the tenant of the SQS fair queue), as lib/queue/messageGroup.ts names a delivery's group.
 */
const clientRule = (client) => {
  if (client.name.length > MAX_TARGET_GROUP_ID)
    fail(
      `client "${client.name}": a name of at most ${MAX_TARGET_GROUP_ID} characters can be a webhook's group`,
    );
  return {
    Type: 'AWS::Events::Rule',
    Properties: {
      Description: `State changes of ${client.name}'s records, to the webhook dispatcher in its own message group`,
      EventBusName: { Ref: 'EventBus' },
      // Only this client's events; the dispatcher posts each to its own client's URL only.
      EventPattern: {
        source: [EVENT_SOURCE],
        'detail-type': [RECORD_STATE_CHANGED],
        detail: { client: [client.name] },
      },
      State: 'ENABLED',
      Targets: [
        { Id: 'webhookQueue', Arn: arnOf(IDS.queue), SqsParameters: { MessageGroupId: client.name } },
      ],
    },
  };
};

/**
 * The clients with a webhook, checked (the rules of lib/clients/webhookRules.cjs), for a stage. Every stage but
 * `local` posts from AWS over the internet: a localhost URL cannot work there.
 *
 * @example
 * webhookClients(require('../config/clients.json'), { service: 'dealer-gateway', stage: 'prod' }).map((c) => c.name)
 * // ['example-dealer']
 */
const webhookClients = (config, { stage }) => {
  const clients = config.clients.filter((client) => client.webhook !== undefined);
  for (const client of clients) {
    const problem = webhookProblem(client);
    if (problem) fail(problem);
    if (stage !== LOCAL_STAGE && isLocalWebhookUrl(client.webhook.url))
      fail(
        `client "${client.name}": webhook.url "${client.webhook.url}" is for npm start only: stage "${stage}" posts ` +
          'from AWS (the webhook dispatcher), which needs a public https:// URL',
      );
  }
  return clients;
};

const arnOf = (id) => ({ 'Fn::GetAtt': [id, 'Arn'] });

/**
 * The ARNs of the clients' webhook secrets (Secrets Manager adds 6 random characters to a secret's name), for the roles
 * that sign webhooks: the dispatcher's and the console API's (its "Resend webhook").
 */
const secretArns = (clients, { service, stage }) =>
  clients.map((client) => ({
    'Fn::Sub': `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${secretsPrefix(service, stage)}${client.name}-??????`,
  }));

/** The records table's key of a client's webhook flag: the same as lib/webhooks/disabledWebhooks.ts webhookFlagKey. */
const webhookFlagKey = (client) => `webhook#${client}`;

/** The prefix of every client's webhook secret of a stage (lib/webhooks/awsSecrets.ts reads `<prefix><client>`). */
const secretsPrefix = (service, stage) => `${service}/${stage}/webhooks/`;

/**
 * The dispatcher's role: exactly its calls (tests/deploy/roles.test.ts checks them against what it does). Made for
 * every stage, as serverless.yml's function names it; with no webhook client it may read no secret and no item.
 */
const dispatcherRole = (clients, { service, stage }) => {
  const statements = [
    {
      Effect: 'Allow',
      Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      Resource: [
        {
          'Fn::Sub': `arn:\${AWS::Partition}:logs:\${AWS::Region}:\${AWS::AccountId}:log-group:/aws/lambda/${service}-${stage}-webhookDispatcher:*`,
        },
      ],
    },
    // Its event source polls with it; a failed try waits for its retry window hidden (ChangeMessageVisibility).
    {
      Effect: 'Allow',
      Action: [
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:ReceiveMessage',
      ],
      Resource: [arnOf(IDS.queue)],
    },
  ];
  if (clients.length > 0)
    statements.push(
      // Its clients' webhook flags (`webhook#<client>`, lib/webhooks/disabledWebhooks.ts): read for each event,
      // written on a 410. No other item of the records table: no record, no hold, no feed entry (IAM's LeadingKeys).
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Resource: [arnOf('RecordsTable')],
        Condition: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': clients.map((client) => webhookFlagKey(client.name)),
          },
          Null: { 'dynamodb:LeadingKeys': 'false' },
        },
      },
      // Its clients' webhook summaries (`webhookSummary#<client>`, lib/webhooks/webhookSummary.ts): one update per try.
      {
        Effect: 'Allow',
        Action: ['dynamodb:UpdateItem'],
        Resource: [arnOf('RecordsTable')],
        Condition: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': clients.map((client) => `webhookSummary#${client.name}`),
          },
          Null: { 'dynamodb:LeadingKeys': 'false' },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      },
      // Each attempt noted in its record's story (lib/store/webhookStory.ts: the console's timeline): an UpdateItem
      // of a status record (a record id: 32 characters, no `#`), of `webhookStory` only (on the condition that `id`
      // exists: never a stub for an expired record).
      {
        Effect: 'Allow',
        Action: ['dynamodb:UpdateItem'],
        Resource: [arnOf('RecordsTable')],
        Condition: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['????????????????????????????????'] },
          'ForAllValues:StringNotLike': { 'dynamodb:LeadingKeys': ['*#*'] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'id', 'webhookStory'] },
          Null: { 'dynamodb:LeadingKeys': 'false' },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
        },
      },
      {
        Effect: 'Allow',
        Action: ['secretsmanager:GetSecretValue'],
        // Secrets Manager adds 6 random characters to a secret's ARN.
        Resource: secretArns(clients, { service, stage }),
      },
    );
  return {
    Type: 'AWS::IAM::Role',
    Properties: {
      AssumeRolePolicyDocument: {
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' },
        ],
      },
      Policies: [
        { PolicyName: 'webhookDispatcher', PolicyDocument: { Version: '2012-10-17', Statement: statements } },
      ],
    },
  };
};

/**
 * The dispatcher's role, a rule per webhook client and the queue policy (only the role when no client has a
 * webhook). Stage `local` gets them too: npm start's local bus routes by these rules, groups included, to its
 * webhook queue (local/eventBus.ts).
 *
 * @example
 * Object.keys(generate(require('../config/clients.json'), { service: 'dealer-gateway', stage: 'prod' }).Resources)
 * // ['WebhookDispatcherRole', 'ExampleDealerWebhookRule', 'ExampleDealerTestWebhookRule', 'WebhookQueuePolicy']
 */
const generate = (config, { service, stage }) => {
  const clients = webhookClients(config, { service, stage });
  const role = { [IDS.role]: dispatcherRole(clients, { service, stage }) };
  if (clients.length === 0) return { Resources: role };
  return {
    Resources: {
      ...role,
      ...Object.fromEntries(clients.map((client) => [webhookIds(client.name).rule, clientRule(client)])),
      [IDS.queuePolicy]: {
        Type: 'AWS::SQS::QueuePolicy',
        Properties: {
          Queues: [{ Ref: IDS.queue }],
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: 'TheWebhookRulesOnly',
                Effect: 'Allow',
                Principal: { Service: 'events.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: arnOf(IDS.queue),
                Condition: {
                  ArnEquals: {
                    'aws:SourceArn': clients.map((client) => arnOf(webhookIds(client.name).rule)),
                  },
                },
              },
            ],
          },
        },
      },
    },
  };
};

/**
 * What serverless.yml reads: `${file(./deploy/webhooks.cjs):template}`, the resources above, and
 * `${file(./deploy/webhooks.cjs):secretArns}`, the clients' webhook secrets the console API's role reads exactly.
 */
module.exports = async ({ resolveVariable }) => {
  const at = { service: await resolveVariable('self:service'), stage: await resolveVariable('sls:stage') };
  return {
    template: generate(clientsConfig, at),
    secretArns: secretArns(webhookClients(clientsConfig, at), at),
  };
};
module.exports.generate = generate;
module.exports.webhookClients = webhookClients;
module.exports.webhookIds = webhookIds;
module.exports.secretsPrefix = secretsPrefix;
module.exports.webhookFlagKey = webhookFlagKey;
module.exports.constants = { EVENT_SOURCE, RECORD_STATE_CHANGED, LOCAL_STAGE, IDS };
