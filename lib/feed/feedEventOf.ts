import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { RecordStateChanged } from '../events/types.ts';
import { webhookEventOf } from '../events/webhookEvent.ts';
import type { Item } from '../store/table.ts';
import type { FeedEvent } from './feedEntries.ts';

/**
 * A feed entry as the client reads it, from its stored item: `id` first, then the event in the contract's order (a
 * DynamoDB map keeps no order), built by the webhooks' own {@link webhookEventOf} so both say the same.
 *
 * @example
 * feedEventOf(item) // { id: '3f0c…:…', type: 'record.delivered', timestamp: '…', data: { recordId: '3f0c…', … } }
 */
export const feedEventOf = (item: Item): FeedEvent => {
  const stored = unmarshall(item.feedEvent?.M ?? {}) as FeedEvent;
  const data = stored.data;
  const event = webhookEventOf({
    ...data,
    eventId: stored.id,
    at: stored.timestamp,
  } as RecordStateChanged);
  return { id: stored.id, ...event };
};
