/**
 * The console API's answers (the console contract, /console/api/*), as the pages read them. Types lib/ declares are
 * imported from it (`import type` only: nothing of lib/ is bundled).
 */
import type { ActivityHour } from '../../lib/console/activity/hours.ts';
import type { TraceRow } from '../../lib/console/traceRow.ts';
import type { Downstream } from '../../lib/outage/types.ts';
import type { StoryEntry } from '../../lib/records/story.ts';

export type { ActivityHour, Downstream };

export type Kind = 'salesRegistration' | 'crmCase';
export type State = 'accepted' | 'delivered' | 'rejected' | 'failed';

export interface Me {
  email: string;
  roles: string[];
}

/** A record in a list: never personal data. */
export interface Row {
  id: string;
  kind: Kind;
  client: string;
  frameNumber?: string;
  state: State;
  attempts: number;
  acceptedAt: string;
  updatedAt: string;
  test: boolean;
}

export interface Page<T> {
  records?: T[];
  entries?: T[];
  next?: string;
}

/** A timeline entry: the record's acceptance and final state, and its story's entries (lib/records/story.ts). */
export type Entry =
  | { at: string; type: 'accepted'; client: string }
  | StoryEntry
  | { at: string; type: 'final'; state: State };

export interface RecordView extends Row {
  downstream: Downstream;
  downstreamId?: string;
  error?: string;
  hasCustomer: boolean;
  lastWebhookId?: string;
  timeline: Entry[];
}

export interface DownstreamView {
  downstream: Downstream;
  name: string;
  held: boolean;
  heldSince?: string;
  reason?: string;
  lastProbeAt?: string;
  nextProbeAt?: string;
  waiting: number;
  /** Salesforce's API allowance as last read (`at`), from the CRM's hold. */
  apiUsage?: { used: number; allowed: number; at: string };
}

export interface WebhookView {
  client: string;
  host: string;
  enabled: boolean;
  lastSuccessAt?: string;
  lastFailureAt?: string;
  failuresLast24h: number;
}

export interface Activity {
  hours: ActivityHour[];
  open: { count: number; oldestAcceptedAt?: string };
}

export interface AuditEntry {
  at: string;
  who: string;
  action: 'redrive' | 'enable-webhook' | 'resend-webhook' | 'view-customer';
  records: string[];
  client?: string;
}

export interface RedriveResult {
  redriven: string[];
  skipped?: { id: string; reason: string }[];
}

/** One span of a record's trace, in drawing order (GET records/{id}/trace): lib's row. */
export type TraceSpan = TraceRow;

export interface TraceView {
  traceId: string;
  spans: TraceSpan[];
}
