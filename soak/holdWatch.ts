/**
 * The downstream holds the service opened during the campaign, seen two ways, because either alone can miss one:
 *
 * - its log: the worker writes one WARN line when its write opens a hold (`downstream held: …`, with `downstream`,
 *   `reason` and `heldSince`), but a SIGKILL between the write and the line loses the line, and a log level above
 *   WARN hides it;
 * - the hold items in its store (`hold#erp`, `hold#crm`), read every half second: an item keeps the `heldSince` of
 *   its last opening after it closed, so a poll sees every opening unless two fall between two polls (a hold opened
 *   wrongly may close at the next answer, well within half a second).
 *
 * An opening is known by its downstream and `heldSince`, so one seen both ways counts once.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AttributeValue,
  BatchGetItemCommand,
  DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { localClientConfig } from '../local/aws.ts';

/** One opening of a downstream's hold. */
export interface HoldOpening {
  downstream: 'erp' | 'crm';
  /** `outage` or `api-usage` (lib/outage/types.ts HoldReason). */
  reason: string;
  /** When the hold opened (ISO), by the service's clock (the same machine's). */
  heldSince: string;
  /** Where the campaign saw it first. */
  seenIn: 'log' | 'store';
  /** From the worker's log line: the records the call that opened it carried, and the parts SAP or Salesforce answered. */
  call?: { carried: number; answered: number };
}

/** The worker's line as its write opens a hold (lib/delivery/holdOutcomes.ts). */
const OPENED_MESSAGE = 'downstream held: records wait without spending tries';

const isDownstream = (value: unknown): value is 'erp' | 'crm' => value === 'erp' || value === 'crm';

/**
 * The opening a service log line reports, if it is the worker's "downstream held" line (Powertools JSON).
 *
 * @example
 * holdOpeningOfLine('{"level":"WARN","message":"downstream held: records wait without spending tries",' +
 *   '"downstream":"crm","reason":"outage","heldSince":"2026-11-28T07:00:00.000Z"}')
 * // { downstream: 'crm', reason: 'outage', heldSince: '2026-11-28T07:00:00.000Z', seenIn: 'log' }
 */
export const holdOpeningOfLine = (line: string): HoldOpening | undefined => {
  // Cheap test first: the service writes thousands of lines.
  if (!line.includes(OPENED_MESSAGE)) return undefined;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { message, downstream, reason, heldSince, callRecords, answeredParts } = entry;
  // Only the opening's line: the worker's other "downstream held: …" lines (INFO) repeat a hold already open.
  if (message !== OPENED_MESSAGE) return undefined;
  if (!isDownstream(downstream) || typeof heldSince !== 'string' || Number.isNaN(Date.parse(heldSince)))
    return undefined;
  const call =
    typeof callRecords === 'number' && typeof answeredParts === 'number'
      ? { call: { carried: callRecords, answered: answeredParts } }
      : {};
  return {
    downstream,
    reason: typeof reason === 'string' ? reason : 'outage',
    heldSince,
    seenIn: 'log',
    ...call,
  };
};

/**
 * Openings as they are seen, each once.
 *
 * @example
 * const watch = createHoldWatch();
 * watch.noteLine(line);
 * watch.noteItem({ downstream: 'erp', held: true, reason: 'outage', heldSince: '2026-11-28T07:00:00.000Z' });
 * watch.openings(); // [{ downstream: 'erp', … }]
 */
export const createHoldWatch = () => {
  const seen = new Map<string, HoldOpening>();
  const add = (opening: HoldOpening) => {
    const key = `${opening.downstream} ${Date.parse(opening.heldSince)}`;
    const known = seen.get(key);
    if (!known) seen.set(key, opening);
    // The log line says what the call was; a hold item read first does not.
    else if (!known.call && opening.call) seen.set(key, { ...known, call: opening.call });
  };
  return {
    noteLine(line: string) {
      const opening = holdOpeningOfLine(line);
      if (opening) add(opening);
    },
    /** A hold item as read from the store: its `heldSince` names its last opening, held or closed since. */
    noteItem(item: { downstream: string; reason?: string; heldSince?: string; held?: boolean }) {
      if (!isDownstream(item.downstream) || !item.heldSince || Number.isNaN(Date.parse(item.heldSince)))
        return;
      // A closed item has no reason any more; its opening was an outage unless the log said otherwise.
      add({
        downstream: item.downstream,
        reason: item.reason ?? 'outage',
        heldSince: item.heldSince,
        seenIn: 'store',
      });
    },
    openings: (): HoldOpening[] =>
      [...seen.values()].sort((a, b) => Date.parse(a.heldSince) - Date.parse(b.heldSince)),
  };
};

export type HoldWatch = ReturnType<typeof createHoldWatch>;

/**
 * Reads both hold items from the store of the `npm start` running on `dataDir` (its endpoint in runner.json,
 * which a restart rewrites, so it is read each time); [] when the store cannot be read just now.
 */
export const holdItemsInStore = async (
  dataDir: string,
): Promise<{ downstream: string; held?: boolean; reason?: string; heldSince?: string }[]> => {
  let runner: { dynamoEndpoint?: string; env?: Record<string, string> };
  try {
    runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8'));
  } catch {
    return [];
  }
  const table = runner.env?.RECORDS_TABLE;
  if (!runner.dynamoEndpoint || !table) return [];
  const dynamo = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 1 });
  try {
    const out = await dynamo.send(
      new BatchGetItemCommand({
        RequestItems: {
          [table]: {
            Keys: [{ pk: { S: 'hold#erp' } }, { pk: { S: 'hold#crm' } }],
            ProjectionExpression: '#d, #h, #r, #s',
            ExpressionAttributeNames: { '#d': 'downstream', '#h': 'held', '#r': 'reason', '#s': 'heldSince' },
            ConsistentRead: true,
          },
        },
      }),
    );
    return (out.Responses?.[table] ?? []).map((item) => ({
      downstream: item.downstream?.S ?? '',
      held: item.held?.BOOL,
      reason: item.reason?.S,
      heldSince: item.heldSince?.S,
    }));
  } catch {
    return [];
  } finally {
    dynamo.destroy();
  }
};

/** What the records of the call that opened a hold say of it (openingCallsInStore). */
export interface OpeningCall {
  /** Records of that call the downstream answered: delivered, or refused for their content (`rejected`). */
  answered: number;
  /** Records of that call that failed (still `accepted` with an error, or `failed`). */
  failed: number;
}

/** The store's records' kind for each downstream. */
const KIND_OF = { erp: 'salesRegistration', crm: 'caseRecord' } as const;

/**
 * The call that opened each hold, from the records' histories in the store of the `npm start` running on
 * `dataDir`: the worker writes the hold and each record's outcome of one call at the same instant (the call's
 * `at`, lib/delivery/deliverBatch.ts), so the records of `opening.downstream` with a history entry at exactly its
 * `heldSince` are that call's. Keyed like the watch (`<downstream> <ms>`); an opening whose call is not found has
 * no entry. Undefined when the store cannot be read.
 *
 * @example
 * const calls = await openingCallsInStore(dataDir, watch.openings());
 * calls.get(`crm ${Date.parse(opening.heldSince)}`); // { answered: 12, failed: 3 }: opened on answers
 */
export const openingCallsInStore = async (
  dataDir: string,
  openings: readonly HoldOpening[],
): Promise<Map<string, OpeningCall> | undefined> => {
  let runner: { dynamoEndpoint?: string; env?: Record<string, string> };
  try {
    runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8'));
  } catch {
    return undefined;
  }
  const table = runner.env?.RECORDS_TABLE;
  if (!runner.dynamoEndpoint || !table) return undefined;
  const wanted = new Map(openings.map((o) => [`${KIND_OF[o.downstream]} ${Date.parse(o.heldSince)}`, o]));
  const calls = new Map<string, OpeningCall>();
  const dynamo = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 3 });
  try {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: table,
          ProjectionExpression: '#kind, #history',
          ExpressionAttributeNames: { '#kind': 'kind', '#history': 'history' },
          ExclusiveStartKey: startKey,
        }),
      );
      for (const item of page.Items ?? []) {
        for (const entry of item.history?.L ?? []) {
          const at = Date.parse(entry.M?.at?.S ?? '');
          const opening = wanted.get(`${item.kind?.S} ${at}`);
          if (!opening) continue;
          const key = `${opening.downstream} ${at}`;
          const call = calls.get(key) ?? { answered: 0, failed: 0 };
          const status = entry.M?.status?.S;
          if (status === 'delivered' || status === 'rejected') call.answered++;
          else call.failed++;
          calls.set(key, call);
        }
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return calls;
  } catch {
    return undefined;
  } finally {
    dynamo.destroy();
  }
};

/**
 * Polls the hold items into `watch` every `everyMs` until stopped (the returned function waits for the poll under
 * way).
 *
 * @example
 * const stop = pollHolds(dataDir, watch);
 * await stop();
 */
export const pollHolds = (dataDir: string, watch: HoldWatch, everyMs = 500): (() => Promise<void>) => {
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const item of await holdItemsInStore(dataDir)) watch.noteItem(item);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
};
