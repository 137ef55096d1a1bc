// Alarms, their SNS topic and the CloudWatch dashboard, generated for both downstreams so that the two stay
// alike. serverless.yml merges this into `resources` (osls resolves `${file(./deploy/monitoring.cjs)}`).
'use strict';

const clientsConfig = require('../config/clients.json');
const { webhookClients, webhookIds, constants } = require('./webhooks.cjs');

const downstreams = [
  {
    name: 'erp',
    label: 'sales registrations (SAP)',
    queue: 'SalesRegistrationQueue',
    deadLetters: 'SalesRegistrationDeadLetterQueue',
    worker: 'ErpDeliveryLambdaFunction',
  },
  {
    name: 'crm',
    label: 'cases (Salesforce)',
    queue: 'CaseQueue',
    deadLetters: 'CaseDeadLetterQueue',
    worker: 'CrmDeliveryLambdaFunction',
  },
];

const capitalised = (text) => text[0].toUpperCase() + text.slice(1);

const alarm = (description, properties) => ({
  Type: 'AWS::CloudWatch::Alarm',
  Properties: {
    AlarmDescription: description,
    AlarmActions: [{ Ref: 'AlarmTopic' }],
    OKActions: [{ Ref: 'AlarmTopic' }],
    TreatMissingData: 'notBreaching',
    EvaluationPeriods: 1,
    ...properties,
  },
});

module.exports = async ({ resolveVariable }) => {
  const service = await resolveVariable('self:service');
  const stage = await resolveVariable('sls:stage');
  const oldestMessageSeconds = Number(await resolveVariable('self:custom.alarms.oldestMessageSeconds'));
  const stuckRecordSeconds = Number(await resolveVariable('self:custom.alarms.stuckRecordSeconds'));
  const namespace = 'DealerGateway';
  const resources = {
    AlarmTopic: {
      Type: 'AWS::SNS::Topic',
      Properties: { TopicName: `${service}-${stage}-alarms`, KmsMasterKeyId: 'alias/aws/sns' },
    },
    AlarmEmailSubscription: {
      Type: 'AWS::SNS::Subscription',
      Condition: 'HasAlarmEmail',
      Properties: {
        TopicArn: { Ref: 'AlarmTopic' },
        Protocol: 'email',
        Endpoint: await resolveVariable('self:custom.alarms.email'),
      },
    },
  };
  for (const d of downstreams) {
    const prefix = capitalised(d.name);
    // On the worker's `failed` count, not the dead-letter queue's depth: a depth alarm stays in ALARM while old
    // dead letters wait, so a second wave would notify nobody. This one fires for every minute with a new one.
    resources[`${prefix}DeadLettersAlarm`] = alarm(
      `New dead-lettered ${d.label}: records failed after every attempt; see the README on redrive`,
      {
        Namespace: namespace,
        MetricName: 'failed',
        Dimensions: [
          { Name: 'service', Value: service },
          { Name: 'downstream', Value: d.name },
        ],
        Statistic: 'Sum',
        Period: 60,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      },
    );
    // Raised once when the hold opens and cleared when it closes (lib/outage): the worker reports each change, the
    // reconciler the state every minute; with no data the alarm keeps its state rather than clearing by itself.
    resources[`${prefix}HeldAlarm`] = alarm(
      `Deliveries of ${d.label} are held: the downstream is down for every record (or its API allowance is nearly spent); records wait, none fails. See docs/operations.md, "When an alarm fires"`,
      {
        Namespace: namespace,
        MetricName: 'downstreamHeld',
        Dimensions: [
          { Name: 'service', Value: service },
          { Name: 'downstream', Value: d.name },
        ],
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'ignore',
      },
    );
    resources[`${prefix}WorkerErrorsAlarm`] = alarm(
      `The ${d.name} delivery worker fails whole batches (${d.label})`,
      {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: d.worker } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      },
    );
    resources[`${prefix}OldestMessageAlarm`] = alarm(
      `${capitalised(d.label)} wait longer than ${oldestMessageSeconds} s for delivery`,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [d.queue, 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 300,
        Threshold: oldestMessageSeconds,
        ComparisonOperator: 'GreaterThanThreshold',
      },
    );
  }
  resources.StuckRecordsAlarm = alarm(
    `Accepted records waited more than ${stuckRecordSeconds} s before the reconciler had to queue them again`,
    {
      Namespace: namespace,
      MetricName: 'oldestRequeuedWait',
      Dimensions: [{ Name: 'service', Value: service }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: stuckRecordSeconds,
      ComparisonOperator: 'GreaterThanThreshold',
    },
  );
  // A client's webhook failing: the dispatcher counts each failed try, a 410, an event dropped while disabled and
  // one given up after 3 days (then in WebhookDeadLetterQueue) as `webhookFailed` with the client's name
  // (lib/webhooks/dispatcher.ts); one alarm per client says whose webhook it is. Tries grow rarer (windows up to
  // 6 h), so the alarm looks at 6 hours. Not locally: no dispatcher there.
  if (stage !== constants.LOCAL_STAGE) {
    for (const client of webhookClients(clientsConfig, { service, stage })) {
      resources[webhookIds(client.name).alarm] = alarm(
        `The webhook of client ${client.name} is failing (or disabled after a 410); see docs/operations.md, "Webhooks"`,
        {
          Namespace: namespace,
          MetricName: 'webhookFailed',
          Dimensions: [
            { Name: 'service', Value: service },
            { Name: 'client', Value: client.name },
          ],
          Statistic: 'Sum',
          Period: 21600,
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
        },
      );
    }
  }
  const outcome = (metric) =>
    downstreams.map((d) => [
      namespace,
      metric,
      'service',
      service,
      'downstream',
      d.name,
      { label: `${metric} ${d.name}` },
    ]);
  const widget = (title, metrics, x, y, stat = 'Sum') => ({
    type: 'metric',
    x,
    y,
    width: 12,
    height: 6,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudFormation Fn::Sub placeholder, not JavaScript's
    properties: { title, metrics, stat, period: 300, region: '${AWS::Region}', view: 'timeSeries' },
  });
  const body = {
    widgets: [
      widget('Accepted', outcome('accepted'), 0, 0),
      widget('Delivered', outcome('delivered'), 12, 0),
      widget('Rejected', outcome('rejected'), 0, 6),
      widget('Failed (dead-lettered)', outcome('failed'), 12, 6),
      widget(
        'Held (1: waiting out an outage or the API allowance)',
        outcome('downstreamHeld'),
        0,
        12,
        'Maximum',
      ),
    ],
  };
  resources.Dashboard = {
    Type: 'AWS::CloudWatch::Dashboard',
    Properties: { DashboardName: `${service}-${stage}`, DashboardBody: { 'Fn::Sub': JSON.stringify(body) } },
  };
  return { Resources: resources };
};
