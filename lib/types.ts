/** Shared domain types of dealer-gateway. */

/** The two kinds of record the service accepts; each has its own queue and downstream system. */
export type RecordKind = 'salesRegistration' | 'caseRecord';

/** Every kind of record, in one list (the stores' and the reconciler's passes go through them). */
export const RECORD_KINDS: readonly RecordKind[] = ['salesRegistration', 'caseRecord'];

/** A downstream system: SAP (`erp`) or Salesforce (`crm`). */
export type Downstream = 'erp' | 'crm';

/** The downstream each kind of record goes to: the one map of it. */
export const DOWNSTREAM_OF_KIND: Readonly<Record<RecordKind, Downstream>> = {
  salesRegistration: 'erp',
  caseRecord: 'crm',
};

/** A sales registration after validation and normalisation (API field names kept). */
export interface SalesRegistration {
  DealerId: number;
  FrameNum: string;
  Model?: string;
  SaleDate: string;
  Name: string;
  Name2: string;
  CompanyName?: string;
  Street: string;
  Floor?: string;
  Town?: string;
  Postcode?: string;
  State?: string;
  email: string;
  Phone: string;
  CommPriv: 'C' | 'P';
  RiderTraining?: string;
  MoreInfo: 'Y' | 'N';
  AllowSharing: 'Y' | 'N';
  Operator?: string;
  Finance?: string;
  Promo?: string;
  Cashback?: string;
  DOB?: string;
  Sex?: 'M' | 'F' | 'X';
}

/**
 * A case after validation and normalisation. `vin-frame` is folded into `frameNo`;
 * unknown fields are dropped; booleans are real booleans; absent fields stay absent.
 */
export interface CaseRecord {
  title?: string;
  firstName: string;
  surname: string;
  email: string;
  mobile?: string;
  homePhone?: string;
  addressPostcode?: string;
  privacyConsent?: boolean;
  subscribeToBrand?: boolean;
  ownBrand?: boolean;
  siteName?: string;
  comments?: string;
  origin?: string;
  frameNo?: string;
}

/**
 * Body of one SQS message: it names an accepted record, never carries it. The worker delivers what the store holds
 * under `id`, so whoever can send to a queue cannot choose what reaches SAP or Salesforce. Messages written before
 * this change also carry `record`; the worker reads them and ignores that field.
 */
export interface QueuedRecord {
  id: string;
  kind: RecordKind;
  /** The intake request that accepted the record, for tracing. */
  requestId: string;
  /**
   * The client the record belongs to: the message's tenant (its SQS MessageGroupId, for fair queues). Absent on
   * messages written before fair queueing.
   */
  owner?: string;
  /** A test client's record: the worker answers it with the simulators (the stored record decides; see lib/delivery). */
  test?: true;
  /**
   * The record's trace context (its intake span's `traceparent`): sent as the message's `traceparent` attribute,
   * never in its body (lib/queue/sendRecords.ts), and read back from the attribute (lib/delivery/message.ts).
   */
  traceparent?: string;
}
