/**
 * The AWS webhook dispatcher (functions/webhookDispatcher.ts): an SQS batch of queued events, each signed and
 * posted on its own (lib/webhooks/dispatch.ts); only the messages to try again are reported back
 * (`ReportBatchItemFailures`, Powertools batch). The posts of a batch go out side by side (Powertools' BatchProcessor
 * handles its records in parallel), and a receiver that is timing out gets one try at a time
 * (lib/webhooks/slowReceivers.ts), so that neither a batch nor the next one waits for it. Per client, a metric
 * `webhookFailed` (dimension `client`) counts failed tries, which the client's alarm watches; an event held back
 * without a call is no try.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqsClient } from '../aws/clients.ts';
import { ChangeMessageVisibilityCommand } from '../aws/jsonProtocol/sqs.ts';
import { errorSummary, logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import { webhookQueueUrl, webhookRetryWindows, webhookSecretsPrefix } from '../settings/settings.ts';
import { ATTEMPT_TIMEOUT_MS } from './attempt.ts';
import { loadAwsWebhookSecrets } from './awsSecrets.ts';
import { tableWebhookSwitch, type WebhookSwitch } from './disabledWebhooks.ts';
import {
  configuredTarget,
  type DispatchDependencies,
  type DispatchResult,
  dispatchWebhookMessage,
} from './dispatch.ts';
import { WebhookGivenUpError, WebhookRetryLaterError } from './errors.ts';
import { createRateLimiter } from './rateLimit.ts';
import { WEBHOOK_RETRY_SCHEDULE } from './retrySchedule.ts';
import { rotationWindowMs } from './secrets.ts';
import { type SlowReceivers, slowReceiverProbeMs, slowReceivers } from './slowReceivers.ts';
import { noteInStory } from './storyNote.ts';

/** The queue's ARN (`arn:aws:sqs:<region>:<account>:<name>`) → its URL, for ChangeMessageVisibility. */
const queueUrlOf = (record: SQSRecord): string => {
  const configured = webhookQueueUrl();
  if (configured) return configured;
  const [, , , region, account, name] = record.eventSourceARN.split(':');
  return `https://sqs.${region}.amazonaws.com/${account}/${name}`;
};

const report = (result: DispatchResult): void => {
  if (result.outcome === 'delivered') return;
  const level =
    result.outcome === 'retry'
      ? 'warn'
      : result.outcome === 'dropped' || result.outcome === 'heldBack'
        ? 'info'
        : 'error';
  logger[level](`webhook ${result.outcome}`, { ...result });
  if (!result.client || result.outcome === 'dropped' || result.outcome === 'heldBack') return;
  const single = metrics.singleMetric();
  single.addDimension('client', result.client);
  single.addMetric('webhookFailed', MetricUnit.Count, 1);
};

/**
 * Creates the dispatcher; the tests give it their own flags, clock and schedule.
 *
 * @example
 * export const handler = createWebhookDispatcher();
 */
export const createWebhookDispatcher = (overrides: Partial<DispatchDependencies> = {}) => {
  const limiter = createRateLimiter();
  let flags: WebhookSwitch | undefined;
  let receivers: SlowReceivers | undefined;
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    webhookSecretsPrefix();
    flags ??= tableWebhookSwitch();
    const schedule = overrides.schedule ?? { ...WEBHOOK_RETRY_SCHEDULE, ...webhookRetryWindows() };
    receivers ??= slowReceivers({
      probeIntervalMs: slowReceiverProbeMs(schedule.baseMs, overrides.timeoutMs ?? ATTEMPT_TIMEOUT_MS),
      now: overrides.now,
    });
    const deps: DispatchDependencies = {
      targetOf: configuredTarget,
      noteAttempt: noteInStory,
      secretsOf: loadAwsWebhookSecrets,
      flags,
      limiter,
      slowReceivers: receivers,
      rotationWindowMs: rotationWindowMs(),
      schedule,
      retryIn: async (record, seconds) => {
        await sqsClient().send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queueUrlOf(record),
            ReceiptHandle: record.receiptHandle,
            VisibilityTimeout: seconds,
          }),
        );
      },
      ...overrides,
    };
    return processPartialResponse(
      event,
      async (record: SQSRecord) => {
        const result = await dispatchWebhookMessage(record, deps).catch((error: unknown) => {
          // The try could not be made (the flag or the secret unreadable, a secret not whsec_): the message comes
          // back after the queue's visibility timeout.
          logger.error('webhook try not made', { messageId: record.messageId, ...errorSummary(error) });
          throw error;
        });
        report(result);
        if (result.outcome === 'retry' || result.outcome === 'heldBack')
          throw new WebhookRetryLaterError(result.error);
        if (result.outcome === 'givenUp') throw new WebhookGivenUpError(result.error);
      },
      new BatchProcessor(EventType.SQS),
      // A batch of one client's failing tries is no failure of the function: its Errors alarm stays for faults.
      { context, throwOnFullBatchFailure: false },
    );
  };
};
