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
import { BatchGetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
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
  const { message, downstream, reason, heldSince } = entry;
  // Only the opening's line: the worker's other "downstream held: …" lines (INFO) repeat a hold already open.
  if (message !== OPENED_MESSAGE) return undefined;
  if (!isDownstream(downstream) || typeof heldSince !== 'string' || Number.isNaN(Date.parse(heldSince)))
    return undefined;
  return { downstream, reason: typeof reason === 'string' ? reason : 'outage', heldSince, seenIn: 'log' };
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
    if (!seen.has(key)) seen.set(key, opening);
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
