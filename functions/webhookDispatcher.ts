import { createWebhookDispatcher } from '../lib/webhooks/dispatcher.ts';

/**
 * SQS consumer of the webhook queue (deploy/webhooks.cjs): signs each client's state-change events per Standard
 * Webhooks and posts them to its webhook, retrying for 3 days (lib/webhooks).
 */
export const handler = createWebhookDispatcher();
