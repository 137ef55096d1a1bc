/**
 * A record's story: what the console's timeline needs that the record's other fields do not keep (each delivery
 * attempt with its answer and duration, waits in a hold, redrives and who, each webhook attempt). Kept on the status
 * record itself, written in the writes the service already makes (so it costs bytes, not writes), bounded, and
 * gone with the record. Each entry is stored as one short string (`<type>|<at>|…`): a list of strings costs a
 * quarter of the bytes of a list of maps, which keeps a delivered record within one write unit (bench/costModel.ts).
 * No entry holds personal data: messages are the adapters' redacted error texts (lib/privacy/redaction.ts), and a
 * redrive names the staff member who made it.
 */
import type { RecordStatus } from './types.ts';

/** The delivery side's entries a record keeps (`story`): the oldest are dropped beyond it. */
export const STORY_LIMIT = 40;

/** The webhook attempts a record keeps (`webhookStory`): the oldest are dropped beyond it. */
export const WEBHOOK_STORY_LIMIT = 20;

/** The longest message kept in an entry (the record's `error` keeps the whole text). */
const MESSAGE_LIMIT = 200;

export type Downstream = 'erp' | 'crm';

/** One entry of a record's story, as the console's timeline shows it. */
export type StoryEntry =
  | {
      at: string;
      type: 'attempt';
      downstream: Downstream;
      /** The downstream's HTTP status where its answer named one, else null (a timeout, a refused connection). */
      status: number | null;
      /** The redacted error text of a failed attempt. */
      message?: string;
      durationMs: number;
    }
  | { at: string; type: 'held'; downstream: Downstream; heldSince: string; until?: string }
  | { at: string; type: 'redrive'; by: string }
  | {
      at: string;
      type: 'webhook';
      client: string;
      webhookId: string;
      status: number | null;
      durationMs?: number;
    };

const TYPE_CODES = { attempt: 'a', held: 'h', redrive: 'r', webhook: 'w' } as const;

const orNull = (text: string | undefined): number | null =>
  text === undefined || text === '' ? null : Number(text);

/**
 * The stored form of an entry: one string, its free text (message, by, webhook id) last so that a `|` in it is kept.
 *
 * @example
 * encodeStoryEntry({ at: '2026-11-22T12:00:01.234Z', type: 'redrive', by: 'operator@example.com' })
 * // 'r|2026-11-22T12:00:01.234Z|operator@example.com'
 */
export const encodeStoryEntry = (entry: StoryEntry): string => {
  const head = `${TYPE_CODES[entry.type]}|${entry.at}`;
  switch (entry.type) {
    case 'attempt':
      return `${head}|${entry.downstream}|${entry.status ?? ''}|${Math.round(entry.durationMs)}|${(entry.message ?? '').slice(0, MESSAGE_LIMIT)}`;
    case 'held':
      return `${head}|${entry.downstream}|${entry.heldSince}|${entry.until ?? ''}`;
    case 'redrive':
      return `${head}|${entry.by}`;
    case 'webhook':
      return `${head}|${entry.client}|${entry.status ?? ''}|${entry.durationMs === undefined ? '' : Math.round(entry.durationMs)}|${entry.webhookId}`;
  }
};

/**
 * An entry read back from its stored string; undefined for one this version cannot read.
 *
 * @example
 * decodeStoryEntry('r|2026-11-22T12:00:01.234Z|operator@example.com') // { at, type: 'redrive', by: 'operator@example.com' }
 */
export const decodeStoryEntry = (stored: string): StoryEntry | undefined => {
  const [code, at, ...rest] = stored.split('|');
  const tail = (from: number) => rest.slice(from).join('|');
  switch (code) {
    case 'a': {
      const message = tail(3);
      return {
        at,
        type: 'attempt',
        downstream: rest[0] as Downstream,
        status: orNull(rest[1]),
        ...(message ? { message } : {}),
        durationMs: Number(rest[2]),
      };
    }
    case 'h':
      return {
        at,
        type: 'held',
        downstream: rest[0] as Downstream,
        heldSince: rest[1],
        ...(rest[2] ? { until: rest[2] } : {}),
      };
    case 'r':
      return { at, type: 'redrive', by: tail(0) };
    case 'w':
      return {
        at,
        type: 'webhook',
        client: rest[0],
        status: orNull(rest[1]),
        ...(rest[2] ? { durationMs: Number(rest[2]) } : {}),
        webhookId: tail(3),
      };
    default:
      return undefined;
  }
};

/**
 * A story with entries added, only the newest `limit` kept.
 *
 * @example
 * storyWith(['a|…'], [{ at, type: 'redrive', by: 'operator@example.com' }]) // ['a|…', 'r|…']
 */
export const storyWith = (
  story: readonly string[] | undefined,
  entries: readonly StoryEntry[],
  limit = STORY_LIMIT,
): string[] => [...(story ?? []), ...entries.map(encodeStoryEntry)].slice(-limit);

/**
 * The HTTP status a downstream's (redacted) answer text names (`HTTP 503…`), or null.
 *
 * @example
 * statusNamedIn('HTTP 503 to the whole $batch') // 503
 */
export const statusNamedIn = (text: string | undefined): number | null => {
  const found = /\bHTTP (\d{3})\b/.exec(text ?? '');
  return found ? Number(found[1]) : null;
};

/** Whether a state is final for the timeline (anything but `accepted`). */
export const isFinal = (state: RecordStatus): boolean => state !== 'accepted';
