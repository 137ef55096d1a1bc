/** What the soak's ledger knows of one record's delivery request to SAP or Salesforce (ledger.ts, batchCalls.ts). */
/** One delivery request a sandbox received, for one record (a batched call counts once per record it carried). */
export interface DownstreamCall {
  downstream: 'sap' | 'salesforce';
  at: number;
  /** What the sandbox answered (or would have: an answer it lost is logged too); 0: dropped unprocessed. */
  status: number;
  /** RegistrationId (SAP) or CrmId (Salesforce). */
  id: string;
  token?: string;
}
