/** The console API's answers (the console contract, /console/api/*), as the pages read them. */

export type Kind = 'salesRegistration' | 'crmCase';
export type State = 'accepted' | 'delivered' | 'rejected' | 'failed';
export type Downstream = 'erp' | 'crm';

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

export type Entry =
  | { at: string; type: 'accepted'; client: string }
  | {
      at: string;
      type: 'attempt';
      downstream: Downstream;
      status: number | null;
      message?: string;
      durationMs: number;
    }
  | { at: string; type: 'held'; downstream: Downstream; heldSince: string; until?: string }
  | { at: string; type: 'final'; state: State }
  | {
      at: string;
      type: 'webhook';
      client: string;
      webhookId: string;
      status: number | null;
      durationMs?: number;
    }
  | { at: string; type: 'redrive'; by: string };

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
  apiUsage?: { used: number; allowed: number };
}

export interface WebhookView {
  client: string;
  host: string;
  enabled: boolean;
  lastSuccessAt?: string;
  lastFailureAt?: string;
  failuresLast24h: number;
}

export interface ActivityHour {
  hour: string;
  downstream: Downstream;
  accepted: number;
  delivered: number;
  failed: number;
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
