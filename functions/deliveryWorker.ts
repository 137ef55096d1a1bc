import { deliveryWorker } from '../lib/delivery/worker.ts';

/**
 * SQS consumer of both delivery queues. serverless.yml deploys it twice, once per queue (erpDelivery and
 * crmDelivery), so each downstream has its own concurrency cap, timeout, secrets and alarms.
 */
export const handler = deliveryWorker;
