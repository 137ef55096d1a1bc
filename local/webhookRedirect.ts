/**
 * Preloaded (`node --import`) into the serverless-offline child, and so into each handler's worker thread (they
 * inherit `--import`): a handler's call to a client's declared webhook URL goes where npm start sends that client's
 * webhooks (local/webhookRoutes.ts: its sandbox receiver for a remote URL), as the dispatcher's do in npm start's own
 * process. The console's "Resend webhook" posts from the console API's handler, which serverless-offline runs; without
 * this it would post to the real dealer system's URL (or, with no network, answer "no answer").
 */
import { clientsConfig } from '../lib/clients/clientsConfig.ts';
import { localWebhookRoutes, redirectWebhookCalls } from './webhookRoutes.ts';

const receiverUrl = process.env.LOCAL_WEBHOOK_RECEIVER_URL;
if (receiverUrl)
  redirectWebhookCalls(
    localWebhookRoutes({
      clients: clientsConfig.clients,
      receiverUrl,
      direct: process.env.LOCAL_WEBHOOKS === 'direct',
    }),
  );
