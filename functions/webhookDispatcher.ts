import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { traceFlush } from '../lib/observability/traceFlush.ts';
import { createWebhookDispatcher } from '../lib/webhooks/dispatcher.ts';

/**
 * SQS consumer of the webhook queue (deploy/webhooks.cjs): signs each client's state-change events per Standard
 * Webhooks and posts them to its webhook, retrying for 3 days (lib/webhooks). Each post is a span of its record's
 * trace, sent before the handler returns (traceFlush).
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(traceFlush())
  .handler(createWebhookDispatcher());
