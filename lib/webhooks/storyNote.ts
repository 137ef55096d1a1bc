import { errorSummary, logger } from '../observability/logger.ts';
import { RECORD_ID_PATTERN } from '../records/recordId.ts';
import { noteWebhookAttempt } from '../store/webhookStory.ts';
import type { DispatchDependencies } from './dispatch.ts';

const plausibleRecordId = new RegExp(RECORD_ID_PATTERN);

/**
 * Notes a webhook attempt in its record's story (the console's timeline, lib/store/webhookStory.ts): one write of its
 * own, whose failure is logged and never fails the webhook. An event of no record (an id no record can have) is not
 * noted.
 *
 * @example
 * await noteInStory(recordId, { at, client: 'example-dealer', webhookId, status: 200, durationMs: 41 });
 */
export const noteInStory: NonNullable<DispatchDependencies['noteAttempt']> = async (recordId, note) => {
  if (!plausibleRecordId.test(recordId)) return;
  try {
    await noteWebhookAttempt(recordId, { type: 'webhook', ...note });
  } catch (error) {
    logger.warn('webhook attempt not noted in its record', { recordId, ...errorSummary(error) });
  }
};
