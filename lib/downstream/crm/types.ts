import type { CaseRecord } from '../../types.ts';
import type { BatchItem, CallOutcome, DeliveryOutcome } from '../types.ts';
import type { ApiUsage } from './apiUsage.ts';

/** Field of a normalised case that a mapping rule may read. */
export type CaseField = keyof CaseRecord;

/**
 * How one Salesforce field gets its value (one key per rule):
 * - `{ "field": "title" }`: the case field as it is (strings stay strings, booleans JSON booleans);
 * - `{ "join": ["firstName", "surname"], "separator": " " }`: the present parts joined (separator default " ");
 * - `{ "firstOf": ["mobile", "homePhone"] }`: the first present field;
 * - `{ "const": "Web" }`: always this value.
 * `field`, `join` and `firstOf` may add `"maxLength": n` to cut a text value to n characters.
 * A rule whose fields are all absent leaves the Salesforce field out of the body.
 */
export type MappingRule =
  | ({ field: CaseField } & Limit)
  | ({ join: CaseField[]; separator?: string } & Limit)
  | ({ firstOf: CaseField[] } & Limit)
  | { const: string | number | boolean };

/**
 * `maxLength` cuts a text value to the Salesforce field's length: e.g. SuppliedName holds 80 characters but
 * firstName and surname may have 40 each, and a case must not be refused for a long name.
 */
export interface Limit {
  maxLength?: number;
}

/** Salesforce field name to rule. */
export type CaseMapping = Readonly<Record<string, MappingRule>>;

/** Connection settings of the Salesforce org (docs/behaviour.md#salesforce-protocol). */
export interface CrmConfig {
  /** The org's My Domain URL, e.g. `https://example.my.salesforce.com`; the token endpoint lives here. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Default `v66.0`. */
  apiVersion?: string;
  /** External id field of Case the upsert goes by; default `Web_Case_Id__c`. */
  externalIdField?: string;
  /** Default: the shipped `caseMapping.json`. */
  mapping?: CaseMapping;
  /** Per request, default 10 000 ms. */
  timeoutMs?: number;
}

/** Upserts cases; create one per process (it caches the access token). */
export interface CrmClient {
  upsertCase(caseRecord: CaseRecord, crmId: string): Promise<DeliveryOutcome>;
  /** The cases one call carries at most (a Collections call's 200). */
  readonly callSize: number;
  /**
   * Upserts up to `callSize` cases (id = CrmId) in ONE call: sObject Collections, or the single upsert for a lone
   * one. One outcome per distinct id, `failedWhole` when the call failed as a whole, and the API usage its answer
   * reported.
   *
   * @throws RangeError for more than `callSize` distinct cases.
   */
  upsertCases(items: readonly BatchItem<CaseRecord>[]): Promise<CallOutcome>;
  /** The API usage the latest Salesforce answer (single or Collections, not token) reported, if any yet. */
  latestApiUsage(): ApiUsage | undefined;
}

/** An OAuth access token and the instance its API calls go to. */
export interface AccessToken {
  accessToken: string;
  /** Without trailing slash. */
  instanceUrl: string;
}

/** Result of a token request; a failure never reached the upsert endpoint. */
export type TokenResult = { ok: true; token: AccessToken } | { ok: false; error: string };

/** What came back from one upsert PATCH, before classification. */
export type PatchAnswer =
  | { kind: 'answered'; status: number; text: string }
  | { kind: 'timedOut'; error: string }
  | { kind: 'networkError'; error: string };
