import type { SalesRegistration } from '../../types.ts';
import type { BatchItem, CallOutcome, DeliveryOutcome } from '../types.ts';

/** Connection settings of the SAP Gateway OData v2 service (docs/behaviour.md#sap-protocol). */
export interface ErpConfig {
  /** Scheme, host and optional path prefix, e.g. `https://erp.example.com`. */
  baseUrl: string;
  /** Path of the entity set, e.g. `/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet`. */
  servicePath: string;
  username: string;
  password: string;
  /** Sent as the `sap-client` query parameter on every request when set. */
  sapClient?: string;
  /** Per request, default 10 000 ms. */
  timeoutMs?: number;
  /** At most this many registrations per `$batch` call (ERP_BATCH_SIZE), default 50. */
  batchSize?: number;
}

/** Delivers sales registrations; create one per process (it caches the CSRF token and cookies). */
export interface ErpClient {
  deliverSalesRegistration(record: SalesRegistration, registrationId: string): Promise<DeliveryOutcome>;
  /** The registrations one call carries at most (ERP_BATCH_SIZE). */
  readonly callSize: number;
  /**
   * Delivers up to `callSize` registrations (id = RegistrationId) in ONE call: a `$batch`, or the single POST for a
   * lone one. One outcome per distinct id; `failedWhole` when the call failed as a whole.
   *
   * @throws RangeError for more than `callSize` distinct registrations.
   */
  deliverSalesRegistrations(items: readonly BatchItem<SalesRegistration>[]): Promise<CallOutcome>;
}

/** A CSRF token with the session cookies it was issued with: SAP accepts the token only with them. */
export interface CsrfSession {
  token: string;
  /** Cookie name to value; merged with cookies the ERP sets later in the same session. */
  cookies: Map<string, string>;
}

/** Result of a CSRF token fetch; a failure never reached the delivery endpoint. */
export type CsrfResult = { ok: true; session: CsrfSession } | { ok: false; error: string };

/** What came back from one delivery POST, before classification. */
export type PostAnswer =
  | { kind: 'answered'; status: number; headers: Headers; text: string }
  | { kind: 'timedOut'; error: string }
  | { kind: 'networkError'; error: string };
