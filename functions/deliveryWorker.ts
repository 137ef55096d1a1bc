import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { deliveryWorker } from '../lib/delivery/worker.ts';
import { traceFlush } from '../lib/observability/traceFlush.ts';

/**
 * SQS consumer of both delivery queues. serverless.yml deploys it twice, once per queue (erpDelivery and
 * crmDelivery), so each downstream has its own concurrency cap, timeout, secrets and alarms. Its spans (each
 * record's attempt, each call) are sent before it returns (traceFlush).
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().use(traceFlush()).handler(deliveryWorker);
