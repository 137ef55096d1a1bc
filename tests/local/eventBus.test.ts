/**
 * The local EventBridge: PutEvents answered as the AWS SDK expects it, and each event matching one of the stack's
 * rules put on the rule's target queue as EventBridge puts it there (the envelope as the message body), before the
 * answer, with the group its target names. The rules here are the ones deploy/webhooks.cjs generates (one per
 * client with a webhook); the dispatcher that reads the queue is the real one (tests/webhooks/dispatcher.test.ts, tests/e2e/webhooks.test.ts).
 */
import { createRequire } from 'node:module';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientsConfig } from '../../lib/clients/types.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../../lib/events/constants.ts';
import type { RecordStateChanged } from '../../lib/events/types.ts';
import { type LocalEventBus, startLocalEventBus } from '../../local/eventBus.ts';
import { checkEventPattern, matchesPattern } from '../../local/eventPattern.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

const BUS = 'dealer-gateway-local';
// The rules deploy/webhooks.cjs generates for clients a and b.
const webhooks = createRequire(import.meta.url)('../../deploy/webhooks.cjs') as {
  generate(
    config: ClientsConfig,
    at: { service: string; stage: string },
  ): {
    Resources: Record<
      string,
      {
        Type: string;
        Properties: { EventPattern?: unknown; Targets?: { SqsParameters?: { MessageGroupId: string } }[] };
      }
    >;
  };
};
const rules = Object.entries(
  webhooks.generate(
    {
      clients: [
        { name: 'a', dealers: [], webhook: { url: 'http://localhost:4010/a' } },
        { name: 'b', dealers: [], webhook: { url: 'http://localhost:4010/b' } },
        { name: 'c', dealers: [] },
      ],
      browserForms: { enabled: false, allowedOrigins: [] },
    },
    { service: 'dealer-gateway', stage: 'local' },
  ).Resources,
).filter(([, resource]) => resource.Type === 'AWS::Events::Rule');

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let bus: LocalEventBus;
let queueUrl: string;
beforeAll(async () => {
  aws = await isolatedAws();
  queueUrl = aws.resources.queues.WebhookQueue.url;
  bus = await startLocalEventBus({ busNames: [BUS] });
  // As local/resources.ts resolves them: each rule's target is the webhook queue, with the target's group.
  bus.route(
    rules.map(([name, rule]) => ({
      name,
      bus: BUS,
      pattern: checkEventPattern(rule.Properties.EventPattern),
      targets: (rule.Properties.Targets ?? []).map((target) => ({
        queueUrl,
        messageGroupId: target.SqsParameters?.MessageGroupId,
      })),
    })),
    process.env.AWS_ENDPOINT_URL_SQS as string,
  );
});
afterAll(async () => {
  await bus?.stop();
});

const detailOf = (client: string, recordId = `rec-${client}`): RecordStateChanged => ({
  eventId: `${recordId}:2026-11-23T00:00:00.000Z`,
  recordId,
  kind: 'salesRegistration',
  client,
  state: 'rejected',
  previousState: 'accepted',
  attempts: 1,
  sequence: 2,
  at: '2026-11-23T00:00:00.000Z',
  acceptedAt: '2026-11-22T23:59:59.000Z',
  error: 'FrameNum already registered',
});

const entry = (client: string, overrides: Record<string, unknown> = {}) => ({
  Source: EVENT_SOURCE,
  DetailType: RECORD_STATE_CHANGED,
  Detail: JSON.stringify(detailOf(client)),
  EventBusName: BUS,
  ...overrides,
});

/** PutEvents as the JSON 1.1 protocol sends it. */
const putEvents = async (entries: unknown[]) => {
  const response = await fetch(bus.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
    body: JSON.stringify({ Entries: entries }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe('the local event bus (PutEvents → the rules’ target queues)', () => {
  it('answers the AWS SDK, failing per entry another bus, bad Detail or missing fields', async () => {
    // Prepare
    const client = new EventBridgeClient({
      endpoint: bus.url,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    // Act
    const result = await client.send(
      new PutEventsCommand({
        Entries: [
          entry('a'),
          entry('a', { EventBusName: 'someone-elses-bus' }),
          entry('a', { EventBusName: `arn:aws:events:eu-west-1:000000000000:event-bus/${BUS}` }),
          entry('a', { Detail: '{not json' }),
          entry('a', { EventBusName: undefined }),
          { EventBusName: BUS, Detail: '{}' },
        ],
      }),
    );
    client.destroy();
    const tooMany = await putEvents(Array.from({ length: 11 }, () => entry('a')));
    const queued = await aws.drain(queueUrl);
    // Assess
    expect(result.FailedEntryCount).toBe(4);
    expect(result.Entries).toEqual([
      { EventId: expect.any(String) },
      { ErrorCode: 'InvalidArgument', ErrorMessage: 'Event bus someone-elses-bus does not exist.' },
      { EventId: expect.any(String) },
      { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' },
      { ErrorCode: 'InvalidArgument', ErrorMessage: 'Event bus default does not exist.' },
      {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: expect.stringContaining('Source, DetailType and Detail'),
      },
    ]);
    expect(tooMany).toMatchObject({ status: 400, body: { __type: 'ValidationException' } });
    expect(queued).toHaveLength(2);
  });

  it('queues the events of clients the rule names, as EventBridge’s envelope, and drops the others', async () => {
    // Act
    const answer = await putEvents([
      entry('a'),
      entry('b'),
      entry('c'),
      entry('nobody'),
      entry('a', { Source: 'other' }),
    ]);
    const queued = (await aws.drain(queueUrl)) as unknown as { detail: RecordStateChanged }[];
    // Assess: c has no webhook, nobody is no client, `other` is another source: no rule matches them.
    expect(answer.body.FailedEntryCount).toBe(0);
    expect(queued.map((envelope) => envelope.detail.client).sort()).toEqual(['a', 'b']);
    expect(queued[0]).toEqual({
      version: '0',
      id: expect.any(String),
      'detail-type': RECORD_STATE_CHANGED,
      source: EVENT_SOURCE,
      account: '000000000000',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      region: 'eu-west-1',
      resources: [],
      detail: detailOf(queued[0].detail.client),
    });
  });

  it("puts each client's events in the client's own message group, the fair queue's tenant", async () => {
    // Prepare
    await aws.drain(queueUrl);
    // Act
    await putEvents([entry('a'), entry('b'), entry('a')]);
    const got = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['MessageGroupId'],
        VisibilityTimeout: 30,
      }),
    );
    for (const message of got.Messages ?? [])
      await aws.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
      );
    // Assess: one rule per client, each target naming its client (deploy/webhooks.cjs), as EventBridge sends it.
    expect(rules.map(([name]) => name)).toEqual(['AWebhookRule', 'BWebhookRule']);
    expect(
      (got.Messages ?? [])
        .map((m) => [
          (JSON.parse(m.Body ?? '{}') as { detail: { client: string } }).detail.client,
          m.Attributes?.MessageGroupId,
        ])
        .sort(),
    ).toEqual([
      ['a', 'a'],
      ['a', 'a'],
      ['b', 'b'],
    ]);
  });

  it('fails the entry when its target queue cannot take it, so the publisher keeps it in its outbox', async () => {
    // Prepare: a bus whose rule targets a queue that does not exist.
    const broken = await startLocalEventBus({ busNames: [BUS] });
    broken.route(
      [
        {
          name: 'r',
          bus: BUS,
          pattern: { source: [EVENT_SOURCE] },
          targets: [{ queueUrl: `${queueUrl}-missing` }],
        },
      ],
      process.env.AWS_ENDPOINT_URL_SQS as string,
    );
    // Act
    const response = await fetch(broken.url, {
      method: 'POST',
      headers: { 'x-amz-target': 'AWSEvents.PutEvents' },
      body: JSON.stringify({ Entries: [entry('a')] }),
    });
    await broken.stop();
    // Assess
    expect(await response.json()).toEqual({
      FailedEntryCount: 1,
      Entries: [{ ErrorCode: 'InternalFailure', ErrorMessage: 'The event could not be sent to its target.' }],
    });
  });
});

describe('event patterns', () => {
  it('match listed values, array fields by any element, nested objects field by field', () => {
    const pattern = checkEventPattern({ source: ['s'], detail: { client: ['a', 'b'] } });
    expect(matchesPattern(pattern, { source: 's', detail: { client: 'b' } })).toBe(true);
    expect(matchesPattern(pattern, { source: 's', detail: { client: ['x', 'a'] } })).toBe(true);
    expect(matchesPattern(pattern, { source: 's', detail: { client: 'c' } })).toBe(false);
    expect(matchesPattern(pattern, { source: 's', detail: {} })).toBe(false);
    expect(matchesPattern(pattern, { source: 's' })).toBe(false);
  });

  it('refuse content filters rather than half-match them', () => {
    expect(() =>
      checkEventPattern({ detail: { client: [{ prefix: 'a' }] } }, 'WebhookRule.EventPattern'),
    ).toThrow(
      'WebhookRule.EventPattern.detail.client: content filter {"prefix":"a"} is not supported by the local event bus',
    );
  });
});
