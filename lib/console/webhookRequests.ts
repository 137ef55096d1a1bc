import type { APIGatewayProxyResult } from 'aws-lambda';
import { clientNamed } from '../clients/clientsConfig.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { logger } from '../observability/logger.ts';
import { tableWebhookSwitch } from '../webhooks/disabledWebhooks.ts';
import { RESEND_REFUSALS, resendLastEvent } from '../webhooks/resend.ts';
import { audit } from './audit.ts';
import type { ConsolePerson } from './types.ts';

/**
 * `POST /console/api/records/{id}/webhook/resend` (operators): the record's last event sent again to its client's
 * webhook with the same `webhook-id` (lib/webhooks/resend.ts resendLastEvent, the dispatcher's own signing and post,
 * as `npm run webhook-secret -- resend`), audited. 404 for no such record; 409 when the client has no webhook, the
 * record no event yet, or the event is past the feed's 30 days.
 *
 * @example
 * await resendAnswer('3f0c…', person) // 200 {"webhookId":"3f0c…:2026-11-22T08:03:12.345Z","status":200}
 */
export const resendAnswer = async (id: string, person: ConsolePerson): Promise<APIGatewayProxyResult> => {
  const result = await resendLastEvent(id);
  if (!result.sent)
    throw new RequestRefusedError(result.why === 'noRecord' ? 404 : 409, RESEND_REFUSALS[result.why]);
  await audit(person, 'resend-webhook', { records: [id], client: result.client });
  logger.info('console webhook resend', { by: person.sub, recordId: id, status: result.outcome.status });
  return jsonResponse(200, { webhookId: result.webhookId, status: result.outcome.status ?? null });
};

/**
 * `POST /console/api/webhooks/{client}/enable` (operators): a webhook disabled after a 410 is called again, by the
 * dispatcher's own switch (lib/webhooks/disabledWebhooks.ts, as `npm run webhook-secret -- enable`), audited. 404 for
 * a client without a webhook.
 *
 * @example
 * await enableAnswer('example-dealer', person) // 200 {"client":"example-dealer","enabled":true}
 */
export const enableAnswer = async (client: string, person: ConsolePerson): Promise<APIGatewayProxyResult> => {
  if (!clientNamed(client)?.webhook)
    throw new RequestRefusedError(404, 'no client with a webhook by this name');
  const was = await tableWebhookSwitch().enable(client);
  await audit(person, 'enable-webhook', { records: [], client });
  logger.info('console webhook enabled', { by: person.sub, client, wasDisabled: was });
  return jsonResponse(200, { client, enabled: true });
};
