/**
 * The soak's check of the state-change events: after the quiet period, every settled record of a client with a
 * webhook must have reached the sandbox webhook receiver (in `npm start`, kept across its restarts) as at least one
 * signed event (`record.<state>`) with the record's final state; every request the receiver got must verify per
 * Standard Webhooks (the receiver checks it with the standardwebhooks library; one that does not is a problem); no
 * event of a client without a webhook may arrive there; and no event may carry a personal value of the records the
 * campaign sent.
 *
 * Copies are allowed (at least once: the worker publishes, the reconciler publishes again what a SIGKILL left in
 * the outbox) and counted apart. An event the receiver has not got is looked for where it may be stuck: the record's
 * outbox (`pendingEvents`) and the local bus's pending and dead deliveries.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AttributeValue,
  DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { fieldClass } from '../lib/privacy/fieldClassification.ts';
import { localClientConfig } from '../local/aws.ts';
import { readQueuesOnDisk } from '../local/emulators/fauxqs/durableQueues.ts';
import type { EventEnvelope } from '../local/eventBus.ts';
import { type SoakRecord, TOKEN_PATTERN } from './workload.ts';

/** The settled states a `Record state changed` event announces (`accepted` comes only from a redrive). */
const SETTLED = new Set(['delivered', 'rejected', 'failed']);

/**
 * Whether a field of a campaign record holds personal data: any field the one classification
 * (lib/privacy/fieldClassification.ts) does not class `kept`, unclassified ones included.
 */
const isPersonal = (op: SoakRecord['op'], field: string): boolean =>
  fieldClass(op === 'sale' ? 'salesRegistration' : 'caseRecord', field) !== 'kept';

/** One status record as the store holds it: only what the check needs. */
export interface StoredStatus {
  id: string;
  kind: string;
  owner: string;
  status: string;
  /** The intake span's `traceparent` (absent on a record accepted before tracing). */
  traceparent?: string;
  /** Epoch ms (NaN when unreadable). */
  acceptedAt: number;
  /** Epoch ms (NaN when unreadable). */
  updatedAt: number;
  /** The campaign's token in its fields (workload.ts), while they are kept: its plan, answered or not. */
  token?: string;
}

/**
 * One event as the receiver lists it (GET /hooks: the signed body `{type, timestamp, data}` and whether it
 * verified), or a delivery still on the local bus (the EventBridge envelope, its `detail` naming the client).
 */
export interface ReceivedHook {
  client: string;
  /** The receiver's verdict on the signature (absent: a delivery on the bus, not yet posted). */
  verified?: boolean;
  event: {
    type?: unknown;
    data?: { recordId?: unknown; state?: unknown };
    detail?: { recordId?: unknown; state?: unknown; client?: unknown };
  };
}

/** What an event is about, whichever form it has. */
const subjectOf = (hook: ReceivedHook) => {
  const detail = hook.event?.detail;
  if (detail)
    return { recordId: detail.recordId, state: detail.state, client: detail.client, type: undefined };
  const data = hook.event?.data ?? {};
  return { recordId: data.recordId, state: data.state, client: hook.client, type: hook.event?.type };
};

export interface EventCounts {
  /** Settled records of clients with a webhook: each must have arrived at least once with its final state. */
  eventsExpected: number;
  /** Of those, records with no event of their final state at the receiver after the wait. */
  eventsLost: number;
  /** Events of those records beyond the first of each state (at least once: allowed). */
  eventCopies: number;
  /**
   * Events of a record or client without a webhook, or for another client's webhook: at the receiver, or on their
   * way to a webhook (the local bus's pending and dead deliveries: the receiver refuses, and so never lists, calls
   * for a client without a webhook).
   */
  eventsLeaked: number;
  /** Events at the receiver that carry a personal value of a record the campaign sent. */
  eventsWithPersonalData: number;
  /** Every event the receiver holds. */
  eventsReceived: number;
  /** Requests the receiver got whose Standard Webhooks signature did not verify (it answered 401). */
  eventsUnverified: number;
}

export interface EventCheck {
  counts: EventCounts;
  /** Records whose final-state event is missing, with that state. */
  missing: Map<string, string>;
  examples: Record<string, string[]>;
}

/**
 * How a person reads a value when deciding whether it is the same: case and whitespace do not matter
 * (`Rider 7`, `RIDER7` and `rider\n7` are one name).
 */
export const normalised = (text: string): string => text.toLowerCase().replace(/\s+/g, '');

/**
 * A part of a personal value this long (normalised) is recognisable on its own: most of an e-mail address, of a
 * street line, of a phone number. Shorter parts are left alone (common words, postcodes and years would match by
 * chance); a whole value counts from {@link WHOLE_VALUE} characters.
 */
export const FRAGMENT = 10;
/** A whole personal value is looked for from this many characters (normalised), and only with a letter below 8. */
export const WHOLE_VALUE = 5;

/** A part found in the personal values of more records than this is common, not personal to anyone. */
export const COMMON = 10;

/** Test mode's last names that choose an outcome (docs/API.md, "Test mode"), normalised. */
const MAGIC_NAMES = new Set(['reject', 'retry', 'fail']);

/** Fragments of the personal values of the campaign's records (normalised) → the field they come from. */
export type PersonalValueIndex = Map<string, string>;

/**
 * What of a value a person would recognise: the whole value and every run of {@link FRAGMENT} characters of it,
 * normalised; nothing for a value too short or too plain to tell apart (a 4-digit postcode, `Mr`).
 */
export const recognisableParts = (value: string): string[] => {
  const text = normalised(value);
  // A value of FRAGMENT characters or more is found through its runs.
  const whole =
    text.length < FRAGMENT && (text.length >= 8 || (text.length >= WHOLE_VALUE && /\p{L}/u.test(text)))
      ? [text]
      : [];
  const runs = Array.from({ length: Math.max(0, text.length - FRAGMENT + 1) }, (_, i) =>
    text.slice(i, i + FRAGMENT),
  );
  return [...whole, ...runs];
};

/**
 * An index of what can be recognised of the personal values of the campaign's records: each value whole and each
 * run of {@link FRAGMENT} characters, normalised (see {@link recognisableParts}), by the field it comes from,
 * leaving out the parts more than {@link COMMON} records share. A
 * received event is then searched at each of its positions, not once per value (thousands of records).
 *
 * @example
 * personalFieldIn('{"error":"refused for RIDER7.AB12@example.com"}', personalValueIndex(records)) // 'email'
 */
export const personalValueIndex = (records: Iterable<SoakRecord>): PersonalValueIndex => {
  const found = new Map<string, { field: string; records: number; last: SoakRecord }>();
  for (const record of records) {
    for (const [field, value] of Object.entries(record.fields)) {
      if (!isPersonal(record.op, field) || (typeof value !== 'string' && typeof value !== 'number')) continue;
      // Test mode's magic last names are words the API defines, not anyone's name (a `rejected` event says `reject`).
      if (MAGIC_NAMES.has(normalised(String(value)))) continue;
      for (const part of recognisableParts(String(value))) {
        const seen = found.get(part);
        if (!seen) found.set(part, { field, records: 1, last: record });
        else if (seen.last !== record) {
          seen.records++;
          seen.last = record;
        }
      }
    }
  }
  // A part many people share (`example.com`, the campaign's one surname) identifies nobody.
  const index: PersonalValueIndex = new Map();
  for (const [part, { field, records: count }] of found) if (count <= COMMON) index.set(part, field);
  return index;
};

/** Lengths of the parts an index holds, longest first (a whole value may be shorter than a fragment). */
const partLengths = (index: PersonalValueIndex): number[] =>
  [...new Set([...index.keys()].map((part) => part.length))].sort((a, b) => b - a);

const lengthsOf = new WeakMap<PersonalValueIndex, number[]>();

/**
 * The field of the first personal value of `index` recognised in `text`: a whole value or a run of
 * {@link FRAGMENT} characters of one, whatever the case or the whitespace.
 */
export const personalFieldIn = (text: string, index: PersonalValueIndex): string | undefined => {
  let lengths = lengthsOf.get(index);
  if (!lengths) {
    lengths = partLengths(index);
    lengthsOf.set(index, lengths);
  }
  // JSON escapes (`\n`, `\"`) are not part of what a person reads.
  const plain = normalised(text.replace(/\\[nrt"\\/]/g, ' '));
  for (let i = 0; i < plain.length; i++) {
    for (const length of lengths) {
      if (i + length > plain.length) continue;
      const field = index.get(plain.slice(i, i + length));
      if (field !== undefined) return field;
    }
  }
  return undefined;
};

/**
 * Counts what arrived against what had to.
 *
 * @param expected final state by record id, for every settled record of a client with a webhook
 * @param foreign ids of the records of clients without a webhook (their events must never arrive)
 * @param webhookClients the clients that declare a webhook
 * @example
 * const { counts } = checkEvents({ expected, foreign, webhookClients, received, personal });
 * // counts.eventsLost === 0 when every final state arrived
 */
export const checkEvents = (input: {
  expected: Map<string, string>;
  foreign: Set<string>;
  webhookClients: Set<string>;
  received: ReceivedHook[];
  /** Deliveries still on the local bus (pending or dead), as hooks: checked for leaks and personal data only. */
  onBus?: ReceivedHook[];
  personal: PersonalValueIndex;
}): EventCheck => {
  const examples: Record<string, string[]> = {};
  const example = (kind: string, text: string) => {
    const list = examples[kind] ?? [];
    examples[kind] = list;
    if (list.length < 5) list.push(text);
  };
  let leaked = 0;
  let unverified = 0;
  let withPersonalData = 0;
  let copies = 0;
  /** `<recordId> <state>` of every expected record's event seen. */
  const seen = new Set<string>();
  const onBus = new Set(input.onBus ?? []);
  for (const hook of [...input.received, ...onBus]) {
    const detail = subjectOf(hook);
    const recordId = typeof detail.recordId === 'string' ? detail.recordId : '';
    const where = onBus.has(hook) ? `on the bus for ${hook.client}` : `under ${hook.client}`;
    if (!onBus.has(hook) && hook.verified !== true) {
      unverified++;
      example('eventsUnverified', `${recordId || '?'} ${where}`);
      continue;
    }
    const field = personalFieldIn(JSON.stringify(hook.event), input.personal);
    if (field !== undefined) {
      withPersonalData++;
      // The field, never the value: the report is no place for personal data either.
      example('eventsWithPersonalData', `${recordId || '?'} ${where}: its ${field}`);
    }
    if (
      !input.webhookClients.has(hook.client) ||
      detail.client !== hook.client ||
      input.foreign.has(recordId)
    ) {
      leaked++;
      example('eventsLeaked', `${recordId || '?'} (client ${String(detail.client)}) ${where}`);
      continue;
    }
    if (onBus.has(hook)) continue;
    if (detail.type !== `record.${String(detail.state)}` || !input.expected.has(recordId)) continue;
    const key = `${recordId} ${String(detail.state)}`;
    if (seen.has(key)) copies++;
    else seen.add(key);
  }
  const missing = new Map<string, string>();
  for (const [id, state] of input.expected) if (!seen.has(`${id} ${state}`)) missing.set(id, state);
  return {
    counts: {
      eventsExpected: input.expected.size,
      eventsLost: missing.size,
      eventCopies: copies,
      eventsLeaked: leaked,
      eventsWithPersonalData: withPersonalData,
      eventsReceived: input.received.length,
      eventsUnverified: unverified,
    },
    missing,
    examples,
  };
};

/** Whether the event promise held: nothing lost, leaked, unverified or carrying personal data. */
export const eventsKept = (counts: EventCounts): boolean =>
  counts.eventsLost === 0 &&
  counts.eventsLeaked === 0 &&
  counts.eventsWithPersonalData === 0 &&
  counts.eventsUnverified === 0;

interface RunnerFile {
  dynamoEndpoint?: string;
  webhookReceiverUrl?: string;
  env?: Record<string, string>;
}

const runnerOf = async (dataDir: string): Promise<RunnerFile | undefined> => {
  try {
    return JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as RunnerFile;
  } catch {
    return undefined;
  }
};

/** Everything the receiver of the `npm start` running on `dataDir` holds; undefined when it cannot be read. */
export const receivedHooks = async (dataDir: string): Promise<ReceivedHook[] | undefined> => {
  const runner = await runnerOf(dataDir);
  const url = runner?.webhookReceiverUrl ?? runner?.env?.LOCAL_WEBHOOK_RECEIVER_URL;
  if (!url) return undefined;
  try {
    const response = await fetch(`${url}/hooks`, { signal: AbortSignal.timeout(30_000) });
    if (response.status !== 200) return undefined;
    return (await response.json()) as ReceivedHook[];
  } catch {
    return undefined;
  }
};

const withStore = async <T>(
  dataDir: string,
  work: (dynamo: DynamoDBClient, table: string) => Promise<T>,
): Promise<T | undefined> => {
  const runner = await runnerOf(dataDir);
  const table = runner?.env?.RECORDS_TABLE;
  if (!runner?.dynamoEndpoint || !table) return undefined;
  const dynamo = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 3 });
  try {
    return await work(dynamo, table);
  } catch {
    return undefined;
  } finally {
    dynamo.destroy();
  }
};

/**
 * Every status record in the store of the `npm start` running on `dataDir` (id, kind, owner, status: none of its
 * personal fields), records no answer named included; undefined when the store cannot be read.
 */
const tokenOf = (record: AttributeValue | undefined): { token?: string } => {
  const token = record ? TOKEN_PATTERN.exec(JSON.stringify(record))?.[0] : undefined;
  return token ? { token } : {};
};

export const statusRecordsInStore = (dataDir: string): Promise<StoredStatus[] | undefined> =>
  withStore(dataDir, async (dynamo, table) => {
    const found: StoredStatus[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: table,
          // Status records only: aliases and Idempotency-Key entries have no `status`.
          FilterExpression: 'attribute_exists(#status) AND attribute_exists(#owner)',
          ProjectionExpression: '#id, #kind, #owner, #status, #traceparent, #acceptedAt, #updatedAt, #record',
          ExpressionAttributeNames: {
            '#id': 'id',
            '#kind': 'kind',
            '#owner': 'owner',
            '#status': 'status',
            '#traceparent': 'traceparent',
            '#acceptedAt': 'acceptedAt',
            '#updatedAt': 'updatedAt',
            '#record': 'record',
          },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        found.push({
          id: item.id?.S ?? '?',
          kind: item.kind?.S ?? '?',
          owner: item.owner?.S ?? '?',
          status: item.status?.S ?? '?',
          ...(item.traceparent?.S ? { traceparent: item.traceparent.S } : {}),
          acceptedAt: Date.parse(item.acceptedAt?.S ?? ''),
          updatedAt: Date.parse(item.updatedAt?.S ?? ''),
          ...tokenOf(item.record),
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return found;
  });

/** Settled records (final state by id) of `owners` among the store's status records. */
export const settledOf = (records: StoredStatus[], owners: Set<string>): Map<string, string> =>
  new Map(
    records
      .filter((record) => owners.has(record.owner) && SETTLED.has(record.status))
      .map((record) => [record.id, record.status]),
  );

/** An event still on the webhook queue or its dead-letter queue (npm start keeps both on disk). */
interface QueuedEvent {
  client: string;
  envelope: EventEnvelope;
  receives: number;
  dead: boolean;
}

/** What the webhook queue and its dead-letter queue of the npm start on `dataDir` hold now. */
const queuedEvents = (dataDir: string): QueuedEvent[] =>
  readQueuesOnDisk(join(dataDir, 'sqs')).map((message) => {
    const envelope = JSON.parse(message.body) as EventEnvelope;
    return {
      client: String(envelope.detail.client),
      envelope,
      receives: message.receiveCount,
      dead: message.queue.endsWith('-dlq'),
    };
  });

/** The events not (yet) acknowledged by a webhook: on the webhook queue or its dead-letter queue, as hooks. */
export const deliveriesOnBus = async (dataDir: string): Promise<ReceivedHook[]> =>
  queuedEvents(dataDir).map((queued) => ({
    client: queued.client,
    event: queued.envelope as unknown as ReceivedHook['event'],
  }));

/**
 * Where each missing event may be stuck: the record's state and outbox now, and its messages on the webhook queue
 * and its dead-letter queue (kept under `<dataDir>/sqs/`). One line per record, at most `limit`.
 */
export const diagnoseMissing = async (
  dataDir: string,
  missing: Map<string, string>,
  received: ReceivedHook[],
  limit = 10,
): Promise<string[]> => {
  const queued = queuedEvents(dataDir);
  const pending = queued.filter((event) => !event.dead);
  const dead = queued.filter((event) => event.dead);
  const onBus = (list: QueuedEvent[], id: string) =>
    list
      .filter((event) => event.envelope.detail.recordId === id)
      .map((event) => `${String(event.envelope.detail.state)} (${event.receives} receives)`);
  const lines: string[] = [];
  for (const [id, state] of [...missing].slice(0, limit)) {
    const record = await withStore(dataDir, async (dynamo, table) => {
      const out = await dynamo.send(
        new GetItemCommand({
          TableName: table,
          Key: { pk: { S: id } },
          ConsistentRead: true,
          ProjectionExpression: '#status, updatedAt, pendingEvents, eventsDueAt, eventsKind',
          ExpressionAttributeNames: { '#status': 'status' },
        }),
      );
      // Whether the reconciler's query can find it: the `events` index at its kind and due time.
      const kind = out.Item?.eventsKind?.S;
      const due = out.Item?.eventsDueAt?.S;
      const indexed =
        kind && due
          ? (
              await dynamo.send(
                new QueryCommand({
                  TableName: table,
                  IndexName: 'events',
                  KeyConditionExpression: 'eventsKind = :kind AND eventsDueAt = :due',
                  ExpressionAttributeValues: { ':kind': { S: kind }, ':due': { S: due } },
                }),
              )
            ).Items?.some((item) => item.pk?.S === id)
          : undefined;
      return out.Item ? { item: out.Item, indexed } : undefined;
    });
    const { item, indexed } = record ?? {};
    const outbox = (item?.pendingEvents?.L ?? []).map((event) => event.M?.state?.S ?? '?');
    const arrived = received
      .filter((hook) => hook.event?.detail?.recordId === id)
      .map((hook) => String(hook.event.detail?.state));
    lines.push(
      `${id} final ${state} (store: ${item?.status?.S ?? 'unreadable'}, updated ${item?.updatedAt?.S ?? '-'}); ` +
        `outbox [${outbox.join(',')}]${item?.eventsDueAt?.S ? ` due ${item.eventsDueAt.S}` : ''}` +
        `${indexed === undefined ? '' : indexed ? ' (in the events index)' : ' (NOT in the events index)'}; ` +
        `webhook queue [${onBus(pending, id).join(',')}], dead letters [${onBus(dead, id).join(',')}]; ` +
        `received [${arrived.join(',')}]`,
    );
  }
  return lines;
};
