import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { dynamoClient, eventBridgeClient } from '../aws/clients.ts';
import { UpdateItemCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { PutEventsCommand } from '../aws/jsonProtocol/eventBridge.ts';
import { EVENT_SOURCE, RECORD_STATE_CHANGED } from '../events/constants.ts';
import { type EventSubject, eventOf } from '../events/stateChange.ts';
import type { RecordStateChanged } from '../events/types.ts';
import { putFeedEntries } from '../feed/feedEntries.ts';
import { inSpan, recordParent } from '../observability/tracing.ts';
import type { PendingEvent, StatusRecord } from '../records/types.ts';
import { eventBusName, recordsTable } from '../settings/settings.ts';
import { type DueIndex, dueIds } from '../store/sparseIndex.ts';
import { getStatusRecords } from '../store/statusRecords.ts';
import { conditionally } from '../store/table.ts';
import { RECORD_KINDS, type RecordKind } from '../types.ts';

/** The sparse index of records with events in their outbox: `eventsKind`, sorted by `eventsDueAt`. Keys only. */
export const EVENTS_INDEX = 'events';
const EVENTS: DueIndex = { name: EVENTS_INDEX, partitionKey: 'eventsKind', sortKey: 'eventsDueAt' };

/** PutEvents takes at most 10 entries a call. */
const ENTRIES_PER_CALL = 10;

const entryOf = (event: RecordStateChanged, bus: string): PutEventsRequestEntry => ({
  EventBusName: bus,
  Source: EVENT_SOURCE,
  DetailType: RECORD_STATE_CHANGED,
  Detail: JSON.stringify(event),
  Time: new Date(event.at),
});

/** Publishes events, 10 a call; true only when the bus took every one of them. */
const putEvents = async (events: RecordStateChanged[]): Promise<boolean> => {
  const bus = eventBusName();
  for (let i = 0; i < events.length; i += ENTRIES_PER_CALL) {
    const out = await eventBridgeClient().send(
      new PutEventsCommand({ Entries: events.slice(i, i + ENTRIES_PER_CALL).map((e) => entryOf(e, bus)) }),
    );
    if ((out.FailedEntryCount ?? 0) > 0) return false;
  }
  return true;
};

/**
 * The published changes the emptying compares one by one, at most: DynamoDB takes condition expressions of up to
 * 4 KB (about 55 changes). More are not needed: a change leaves an outbox only when the whole outbox is emptied,
 * and is never appended again, so an outbox of the same size that begins with the same changes is the one read.
 */
const COMPARED_CHANGES = 25;

/**
 * Empties a record's outbox of the events just published, only if it still holds exactly those: the same number,
 * and at each place the same change (its time, the `at` of its `eventId`, and its state; the first
 * {@link COMPARED_CHANGES} places). A size alone is not
 * enough: another publisher may have emptied the outbox and a redrive appended a new change meanwhile, which a
 * clear by size would remove unpublished, lost for good. When anything differs, the outbox stays and the
 * reconciler publishes it again: a receiver sees a copy, with the same `eventId`, rather than miss one.
 */
const clearOutbox = (id: string, published: readonly PendingEvent[]): Promise<boolean> => {
  const compared = published.slice(0, COMPARED_CHANGES);
  const sameChanges = compared.map(
    (_, i) => `pendingEvents[${i}].#at = :at${i} AND pendingEvents[${i}].#state = :state${i}`,
  );
  const values: Record<string, AttributeValue> = { ':published': { N: String(published.length) } };
  compared.forEach((pending, i) => {
    values[`:at${i}`] = { S: pending.at };
    values[`:state${i}`] = { S: pending.state };
  });
  return conditionally(
    dynamoClient().send(
      new UpdateItemCommand({
        TableName: recordsTable(),
        Key: { pk: { S: id } },
        UpdateExpression: 'REMOVE pendingEvents, eventsKind, eventsDueAt',
        ConditionExpression: ['size(pendingEvents) = :published', ...sameChanges].join(' AND '),
        ExpressionAttributeNames: { '#at': 'at', '#state': 'state' },
        ExpressionAttributeValues: values,
      }),
    ),
  );
};

/**
 * Publishes the events in a record's outbox to its client's event feed (lib/feed) and the stack's bus, and then
 * empties the outbox. At least once: a crash between these leaves them for the reconciler, which publishes them
 * again (same `eventId`, the same feed entry).
 *
 * @returns how many events were published (0 when there were none).
 * @throws when the bus refused them or could not be reached; they stay in the outbox.
 * @example
 * const written = await recordAttempt(claimed, outcome, lease);
 * if (written) await publishRecordEvents(written).catch(() => undefined); // the reconciler tries again
 */
export const publishRecordEvents = async (
  record: EventSubject & Pick<StatusRecord, 'pendingEvents'>,
): Promise<number> => {
  const pending = record.pendingEvents ?? [];
  const events = pending.map((change) => eventOf(record, change));
  if (events.length === 0) return 0;
  // A span of the record's trace (contract section 8): the events carry its traceparent on to the webhooks.
  return inSpan(
    'publish events',
    {
      parent: recordParent(record.traceparent),
      kind: 'producer',
      attributes: { 'record.id': record.id, 'events.count': events.length },
    },
    async () => {
      // The feed first: a webhook never tells of an event its client cannot find in the feed.
      await putFeedEntries(events);
      if (!(await putEvents(events))) throw new Error('the event bus refused events');
      await clearOutbox(record.id, pending);
      return events.length;
    },
  );
};

/** After the bus failed a worker, it leaves publishing to the reconciler this long (no timeout per record). */
const BUS_PAUSE_MS = 30_000;
let busPausedUntil = 0;

/**
 * The worker's part: publishes a record's outbox right after the outcome was written, never failing or holding up
 * the delivery. When the bus fails, the events stay in the outbox for the reconciler, and for the next 30 s the
 * worker does not try again (a bus outage costs no delivery a timeout).
 *
 * @returns true when published now, false when left for the reconciler.
 * @example
 * const written = await recordAttempt(claimed, outcome, lease);
 * if (written) await publishAfterOutcome(written);
 */
export const publishAfterOutcome = async (
  record: EventSubject & Pick<StatusRecord, 'pendingEvents'>,
  now = Date.now(),
): Promise<boolean> => {
  if (now < busPausedUntil) return false;
  try {
    await publishRecordEvents(record);
    return true;
  } catch {
    busPausedUntil = now + BUS_PAUSE_MS;
    return false;
  }
};

/** Records whose outboxes one run publishes at most: a backlog after a bus outage is worked off run by run, each well inside the reconciler's minute. */
export const DUE_EVENTS_LIMIT = 500;

/** What a run of {@link publishDueEvents} did. */
export interface DueEventsResult {
  /** Events published. */
  published: number;
  /** Records whose events could not be published (they stay for the next run). */
  unpublished: number;
  /** Why the first of them could not be: for the reconciler's warning (the feed's write, the bus, the store). */
  cause?: unknown;
}

/**
 * The reconciler's part: publishes the events still in records' outboxes at their `eventsDueAt` (a worker that
 * crashed or found the bus unreachable after recording an outcome), through the sparse `events` index, no scan.
 *
 * @example
 * const { published } = await publishDueEvents({ now: new Date() });
 */
export const publishDueEvents = async (
  options: { now?: Date; kinds?: readonly RecordKind[]; pageSize?: number; limit?: number } = {},
): Promise<DueEventsResult> => {
  const dueBefore = (options.now ?? new Date()).toISOString();
  const result: DueEventsResult = { published: 0, unpublished: 0 };
  let left = options.limit ?? DUE_EVENTS_LIMIT;
  for (const kind of options.kinds ?? RECORD_KINDS) {
    const pages = dueIds(EVENTS, kind, { dueBefore, pageSize: options.pageSize, limit: left });
    for await (const ids of pages) {
      left -= ids.length;
      const records = await getStatusRecords(ids, { consistent: true });
      for (const record of records.values()) {
        try {
          result.published += await publishRecordEvents(record);
        } catch (cause) {
          // The bus is down or refusing: the rest waits for the next run rather than each waiting for its timeout.
          result.unpublished++;
          result.cause = cause;
          return result;
        }
      }
    }
  }
  return result;
};
