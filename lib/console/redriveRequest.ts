import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { bodyTextOf } from '../http/bodyText.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { logger } from '../observability/logger.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { redriveRecords } from '../redrive/redrive.ts';
import { audit } from './audit.ts';
import type { ConsolePerson } from './types.ts';

/** The most records one redrive takes: a page of the "Failed" list. */
export const MAX_REDRIVE_IDS = 100;

const recordId = new RegExp(RECORD_ID_PATTERN);

/** The ids of a redrive request's body `{"ids": [...]}`, or a 400 naming what is wrong. */
const idsOf = (event: APIGatewayProxyEvent): string[] => {
  const text = event.body ? bodyTextOf(event.body, event.isBase64Encoded) : undefined;
  let body: unknown;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    throw new RequestRefusedError(400, 'body is not valid JSON');
  }
  const ids = (body as { ids?: unknown } | null | undefined)?.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_REDRIVE_IDS)
    throw new RequestRefusedError(400, `ids must be an array of 1 to ${MAX_REDRIVE_IDS} record ids`);
  const malformed = ids.findIndex((id) => typeof id !== 'string' || !recordId.test(id));
  if (malformed >= 0) throw new RequestRefusedError(400, `ids[${malformed}] is not a record id`);
  return ids as string[];
};

/**
 * `POST /console/api/records/redrive` with `{"ids": [...]}` (operators): the chosen failed records accepted again
 * and queued, by the code `npm run redrive` runs (lib/redrive/redrive.ts). Logged by the person's `sub` and the
 * record ids, nothing personal; audited (who, which records redriven), and each record's timeline names who redrove it.
 *
 * @example
 * await redriveAnswer(event, person) // 200 {"redriven":["3f0c…"],"skipped":[{"id":"9a1b…","reason":"not failed"}]}
 */
export const redriveAnswer = async (
  event: APIGatewayProxyEvent,
  person: ConsolePerson,
): Promise<APIGatewayProxyResult> => {
  const ids = idsOf(event);
  const result = await redriveRecords(ids, person.email);
  logger.info('console redrive', { by: person.sub, ...result });
  await audit(person, 'redrive', { records: result.redriven });
  return jsonResponse(200, {
    redriven: result.redriven,
    skipped: [
      ...result.notFailed.map((id) => ({ id, reason: 'not failed' })),
      ...result.personalDataRemoved.map((id) => ({ id, reason: 'personal data removed' })),
    ],
    // Accepted again but not queued now: the reconciler queues them within minutes.
    ...(result.unqueued.length > 0 ? { unqueued: result.unqueued } : {}),
  });
};
