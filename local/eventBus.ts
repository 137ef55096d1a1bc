/**
 * The local EventBridge: answers PutEvents (AWS_ENDPOINT_URL_EVENTBRIDGE points here) and, as EventBridge does,
 * sends each event matching one of the stack's rules to the rule's targets: the rules are serverless.yml's own
 * (`AWS::Events::Rule`, e.g. deploy/webhooks.cjs's rule per client to the webhook queue), their targets the local
 * queues, each with the MessageGroupId its target names (SqsParameters), which the local fair queue serves by. An
 * event is in its target queue before PutEvents answers; one that matches no rule is accepted and dropped.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from './aws.ts';
import { AwsJsonError, startAwsJsonServer } from './awsJsonServer.ts';
import { type EventPattern, matchesPattern } from './eventPattern.ts';
import { localRegion } from './project.ts';

/** The account every local ARN and envelope names. */
export const LOCAL_ACCOUNT = '000000000000';
/** PutEvents takes at most 10 entries a request. */
const MAX_ENTRIES = 10;

/** An event as EventBridge hands it to a target (the body of the message it puts on a target queue). */
export interface EventEnvelope {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/** A rule's target: a local queue, and the group its messages get (the target's `SqsParameters`). */
export interface LocalTarget {
  queueUrl: string;
  messageGroupId?: string;
}

/** A rule of the stack, its targets resolved to local queues. */
export interface LocalRule {
  /** The rule's logical id (for messages). */
  name: string;
  /** The bus it is on. */
  bus: string;
  pattern: EventPattern;
  /** The local queues it sends to. */
  targets: LocalTarget[];
}

export interface LocalEventBusOptions {
  /** The bus names (or ARNs' names) PutEvents entries may name; others fail per entry. */
  busNames?: string[];
  region?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Why a request failed unexpectedly (default: stderr). */
  onError?: (error: unknown) => void;
}

export interface LocalEventBus {
  /** http://127.0.0.1:<port>: the value of AWS_ENDPOINT_URL_EVENTBRIDGE. */
  url: string;
  /** Sets the bus names entries may name (the stack's buses, known once serverless.yml is resolved). */
  answerTo(names: string[]): void;
  /** Sets the rules (serverless.yml's, once its queues exist) and the SQS endpoint their queues are on. */
  route(rules: LocalRule[], sqsEndpoint: string): void;
  stop(): Promise<void>;
}

interface PutEventsEntry {
  Source?: unknown;
  DetailType?: unknown;
  Detail?: unknown;
  EventBusName?: unknown;
  Time?: unknown;
  Resources?: unknown;
}

type ResultEntry = { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** EventBridge's `time`: ISO 8601 to the second. */
const eventTime = (time: unknown): string => {
  // JSON 1.1 sends timestamps as epoch seconds; accept an ISO string too.
  const ms =
    typeof time === 'number' ? time * 1000 : typeof time === 'string' ? Date.parse(time) : Date.now();
  return new Date(Number.isFinite(ms) ? ms : Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/** `my-bus` or `arn:aws:events:<region>:<account>:event-bus/my-bus` → `my-bus`; unset → `default`. */
const busNameOf = (value: unknown): string => {
  if (typeof value !== 'string' || value === '') return 'default';
  const arn = /^arn:[^:]+:events:[^:]*:[^:]*:event-bus\/(.+)$/.exec(value);
  return arn ? arn[1] : value;
};

const parseDetail = (detail: unknown): Record<string, unknown> | undefined => {
  if (typeof detail !== 'string') return undefined;
  try {
    const parsed = JSON.parse(detail) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Starts the local event bus; it routes nothing until `route` gives it the stack's rules.
 *
 * @example
 * const bus = await startLocalEventBus({ busNames: ['dealer-gateway-local'] });
 * bus.route([{ name: 'ExampleDealerWebhookRule', bus: 'dealer-gateway-local', pattern, targets: [{ queueUrl, messageGroupId: 'example-dealer' }] }], sqsEndpoint);
 * await bus.stop();
 */
export const startLocalEventBus = async (options: LocalEventBusOptions = {}): Promise<LocalEventBus> => {
  const region = options.region ?? localRegion;
  let busNames = new Set(options.busNames ?? []);
  let rules: LocalRule[] = [];
  let sqs: SQSClient | undefined;

  /** One entry: its result, once every matching rule's target queue holds it. */
  const accept = async (entry: PutEventsEntry): Promise<ResultEntry> => {
    if (entry === null || typeof entry !== 'object')
      return { ErrorCode: 'InvalidArgument', ErrorMessage: 'Entry is not an object.' };
    const bus = busNameOf(entry.EventBusName);
    if (!busNames.has(bus))
      return { ErrorCode: 'InvalidArgument', ErrorMessage: `Event bus ${bus} does not exist.` };
    if (
      typeof entry.Source !== 'string' ||
      typeof entry.DetailType !== 'string' ||
      entry.Detail === undefined
    )
      return {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: 'Parameters Source, DetailType and Detail must be specified.',
      };
    const detail = parseDetail(entry.Detail);
    if (!detail) return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
    const envelope: EventEnvelope = {
      version: '0',
      id: randomUUID(),
      'detail-type': entry.DetailType,
      source: entry.Source,
      account: LOCAL_ACCOUNT,
      time: eventTime(entry.Time),
      region,
      resources: Array.isArray(entry.Resources) ? entry.Resources.map(String) : [],
      detail,
    };
    const targets = rules
      .filter((rule) => rule.bus === bus && matchesPattern(rule.pattern, envelope))
      .flatMap((rule) => rule.targets);
    try {
      const client = sqs;
      await Promise.all(
        targets.map((target) =>
          client?.send(
            new SendMessageCommand({
              QueueUrl: target.queueUrl,
              MessageBody: JSON.stringify(envelope),
              ...(target.messageGroupId ? { MessageGroupId: target.messageGroupId } : {}),
            }),
          ),
        ),
      );
    } catch {
      // EventBridge would retry its target for a day; here the publisher is told, and its outbox keeps the event.
      return { ErrorCode: 'InternalFailure', ErrorMessage: 'The event could not be sent to its target.' };
    }
    return { EventId: envelope.id };
  };

  const server = await startAwsJsonServer(
    'local event bus',
    {
      'AWSEvents.PutEvents': async (request) => {
        const entries = request.Entries;
        if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES)
          throw new AwsJsonError('ValidationException', `Entries must hold 1 to ${MAX_ENTRIES} entries.`);
        // Sent side by side; results keep the entries' order.
        const results = await Promise.all((entries as PutEventsEntry[]).map(accept));
        return {
          FailedEntryCount: results.filter((result) => 'ErrorCode' in result).length,
          Entries: results,
        };
      },
    },
    {
      port: options.port,
      onError:
        options.onError ??
        ((error) =>
          process.stderr.write(
            `[local] event bus: ${error instanceof Error ? error.message : String(error)}\n`,
          )),
    },
  );

  return {
    url: server.url,
    answerTo(names) {
      busNames = new Set(names);
    },
    route(next, sqsEndpoint) {
      sqs?.destroy();
      sqs = new SQSClient({ ...localClientConfig(sqsEndpoint), useQueueUrlAsEndpoint: false });
      rules = next;
    },
    async stop() {
      await server.stop();
      sqs?.destroy();
    },
  };
};
