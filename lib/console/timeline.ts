import { decodeStoryEntry, type StoryEntry } from '../records/story.ts';
import type { RecordStatus, StatusRecord } from '../records/types.ts';

/** One entry of a record's timeline, as `GET records/{id}` answers it (the console contract's Entry). */
export type TimelineEntry =
  | { at: string; type: 'accepted'; client: string }
  | StoryEntry
  | { at: string; type: 'final'; state: Exclude<RecordStatus, 'accepted'> };

type TimelineSource = Pick<StatusRecord, 'id' | 'kind' | 'owner' | 'acceptedAt' | 'updatedAt' | 'status'> &
  Partial<Pick<StatusRecord, 'history' | 'story' | 'webhookStory'>>;

/**
 * A record's timeline, oldest first: its acceptance (from the record), the entries of its story (attempts, hold
 * waits, redrives, webhook attempts: lib/records/story.ts), and each time it reached a final state (from its history;
 * a record settled before histories carried them, from its state and `updatedAt`).
 *
 * @example
 * timelineOf(record) // [{ type: 'accepted', … }, { type: 'attempt', status: 201, durationMs: 412, … }, { type: 'final', state: 'delivered', … }]
 */
export const timelineOf = (record: TimelineSource): TimelineEntry[] => {
  const entries: TimelineEntry[] = [{ at: record.acceptedAt, type: 'accepted', client: record.owner }];
  const context = {
    recordId: record.id,
    client: record.owner,
    downstream: record.kind === 'caseRecord' ? ('crm' as const) : ('erp' as const),
  };
  for (const stored of [...(record.story ?? []), ...(record.webhookStory ?? [])]) {
    const entry = decodeStoryEntry(stored, context);
    if (entry) entries.push(entry);
  }
  const finals = (record.history ?? []).filter((step) => step.status !== 'accepted');
  for (const step of finals)
    entries.push({ at: step.at, type: 'final', state: step.status as Exclude<RecordStatus, 'accepted'> });
  if (finals.length === 0 && record.status !== 'accepted')
    entries.push({ at: record.updatedAt, type: 'final', state: record.status });
  // Stable: entries of one moment keep their order (the attempt before its final state).
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => (a.entry.at < b.entry.at ? -1 : a.entry.at > b.entry.at ? 1 : a.index - b.index))
    .map(({ entry }) => entry);
};
