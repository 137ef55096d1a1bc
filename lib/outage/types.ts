/** Types of the downstream hold (docs/behaviour.md#outages-and-holds). */

export type { Downstream } from '../types.ts';

import type { Downstream } from '../types.ts';

/** Why a downstream is held: it failed for every record tried, or the org's API allowance is nearly spent. */
export type HoldReason = 'outage' | 'api-usage';

/** A Salesforce answer's `Sforce-Limit-Info: api-usage=<used>/<allowed>`. */
export interface ApiUsage {
  used: number;
  allowed: number;
}

/** A reading of the org's API usage as the hold keeps it for the console's Downstreams page: when it was read. */
export interface ApiUsageReading extends ApiUsage {
  /** When the answer carrying it was counted (ISO). */
  at: string;
}

/**
 * The hold of one downstream as stored: one item per downstream in the records table (pk `hold#<downstream>`),
 * shared by every worker instance. It holds ids and times only, no personal data, and never expires.
 */
export interface HoldRecord {
  downstream: Downstream;
  held: boolean;
  /** While held: why. */
  reason?: HoldReason;
  /** While held: since when (ISO). After it closed: when the last hold began. */
  heldSince?: string;
  /** When the last hold closed (ISO); absent while held. */
  closedAt?: string;
  /** While held: the next probe may start at or after this time (ISO). Only a conditional write moves it. */
  probeAt?: string;
  /** Transient failures in a row, with no answer between them (0 while held). */
  failures: number;
  /**
   * The downstream's latest calls made while not held, oldest first, at most OUTAGE_RATE_WINDOW: `1` a call that failed
   * whole (no part answered), `0` a call with a part answered. Kept through a hold: its failure rate is what records
   * failing alone after the hold closes are judged by (lib/outage/rules.ts, loneFailureChance).
   */
  recentCalls?: string;
  /** Calls counted in `recentCalls` since the hold last closed, at most OUTAGE_RATE_WINDOW: only such calls reopen it. */
  callsSinceClose?: number;
  /** Written by an older rule (a streak of two records at least); no longer read, removed at the next write. */
  firstFailedRecord?: string;
  /** Written by an older rule; no longer read, removed at the next write. */
  severalRecords?: boolean;
  /**
   * Salesforce's API usage as last stored (CRM only): written with any change of the hold, and on its own at most
   * once per API_USAGE_REFRESH_SECONDS (lib/outage/rules.ts, withApiUsage). Absent until an answer carried one.
   */
  apiUsage?: ApiUsageReading;
  /** Bumped by every write but a probe's claim: the condition of the next write (compare and set). */
  version: number;
  updatedAt?: string;
}

/** The outcome of one delivery call, as the hold counts it. */
export interface NotedOutcome {
  recordId: string;
  /** `delivered` and `permanent` mean the downstream answered; `transient` that it did not (or not usefully). */
  kind: 'delivered' | 'permanent' | 'transient';
  /** The call was a probe granted while the downstream was held. */
  probe?: boolean;
  /** The answer's API usage (Salesforce), when it carried one. */
  apiUsage?: ApiUsage;
}

/** A change of a hold, for the caller's metric (`downstreamHeld`) and log line. */
export type HoldTransition =
  | { downstream: Downstream; change: 'opened'; reason: HoldReason; heldSince: string }
  | {
      downstream: Downstream;
      change: 'closed';
      reason: HoldReason;
      heldSince: string;
      closedAt: string;
      /** How long it was held, in whole seconds. */
      heldSeconds: number;
    };

/** What a worker, a status look-up or operations see of a hold. */
export interface HoldState {
  held: boolean;
  /** When the last hold closed (ISO), if one ever did: a record's whole-call give-backs count from then. */
  closedAt?: string;
  heldSince?: string;
  reason?: HoldReason;
  /** While held: the next probe may start at or after this time (ISO). */
  nextProbeAt?: string;
  /**
   * Not held, once OUTAGE_RATE_WINDOW calls are counted: the share of them that failed whole (absent: not known yet).
   */
  failureRate?: number;
}

/** Whether a worker may call the downstream now. */
export type DeliveryPermit =
  /** Yes; `probe` when the downstream is held and this call is the one probe of the period. */
  | { deliver: true; probe: boolean }
  /** No: held; the next probe may start at `until` (ISO), the record waits without spending an attempt. */
  | { deliver: false; until: string; heldSince: string; reason: HoldReason };
