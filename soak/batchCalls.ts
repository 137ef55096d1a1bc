/**
 * The ledger's view of batched delivery calls: one SAP `$batch` or one Salesforce Collections call carries many
 * records, and its whole-call status (202, 200, 503, 0) says nothing of each. So each call is split into one
 * {@link DownstreamCall} per record it carried, and each record's own status is read from what the sandbox
 * stored: the record was **created** by the last call carrying it that arrived before the sandbox stored it
 * (201); a call carrying a record already stored, and carried out, was a **repeat** the downstream recognised
 * (SAP: the `409` naming our RegistrationId; Salesforce: an upsert that updated, 200); anything else created
 * nothing (a refused change set or record, 400; or the whole call's own status).
 */
import type { DownstreamCall } from './downstreamCall.ts';
import { TOKEN_PATTERN } from './workload.ts';

/** A record a batched call carried, before its own status is known. */
export interface CarriedRecord {
  downstream: 'sap' | 'salesforce';
  at: number;
  /** The whole call's status (0: no answer). */
  callStatus: number;
  id: string;
  token?: string;
}

/** Whole-call statuses after which the downstream may have carried the records out (0: a lost answer). */
const carriedOut = (status: number) => status === 200 || status === 202 || status === 0;

/**
 * The registrations a `$batch` body carries: one JSON entity per change set (its embedded POST's body line).
 *
 * @example
 * sapBatchRecords(body, at, 202) // [{ downstream: 'sap', id: '3f0c…', token: 'SOAK-…', callStatus: 202, at }]
 */
export const sapBatchRecords = (body: string, at: number, callStatus: number): CarriedRecord[] =>
  body
    .split(/\r?\n/)
    .filter((line) => line.startsWith('{'))
    .flatMap((line): CarriedRecord[] => {
      try {
        const entity = JSON.parse(line) as { RegistrationId?: unknown };
        const id = String(entity.RegistrationId ?? '');
        return [{ downstream: 'sap', at, callStatus, id, token: TOKEN_PATTERN.exec(line)?.[0] }];
      } catch {
        return [];
      }
    });

/**
 * The cases a Collections body carries, by their external id field.
 *
 * @example
 * collectionsRecords(body, at, 200, 'Web_Case_Id__c') // [{ downstream: 'salesforce', id: '<CrmId>', … }]
 */
export const collectionsRecords = (
  body: string,
  at: number,
  callStatus: number,
  externalIdField: string,
): CarriedRecord[] => {
  let records: unknown;
  try {
    records = (JSON.parse(body) as { records?: unknown }).records;
  } catch {
    return [];
  }
  if (!Array.isArray(records)) return [];
  return records.map((record) => {
    const text = JSON.stringify(record);
    const id = String((record as Record<string, unknown>)?.[externalIdField] ?? '');
    return { downstream: 'salesforce', at, callStatus, id, token: TOKEN_PATTERN.exec(text)?.[0] };
  });
};

/**
 * Gives every record a batched call carried its own status, from when the sandbox stored each record (`createdAt`
 * by id) and the other calls carrying it (`allCalls`: single calls with their exact statuses, and batched ones).
 *
 * @example
 * recordStatuses(carried, [...singles, ...carried], new Map([[id, Date.parse(stored.createdAt)]]))
 */
export const recordStatuses = (
  carried: CarriedRecord[],
  allCalls: { id: string; at: number }[],
  createdAt: Map<string, number>,
): DownstreamCall[] => {
  /** The creating call of each id: the last call carrying it that arrived no later than its creation. */
  const creator = new Map<string, { id: string; at: number }>();
  for (const call of allCalls) {
    const created = createdAt.get(call.id);
    if (created === undefined || call.at > created) continue;
    const best = creator.get(call.id);
    if (!best || call.at >= best.at) creator.set(call.id, call);
  }
  return carried.map((record): DownstreamCall => {
    const created = createdAt.get(record.id);
    let status: number;
    if (creator.get(record.id) === record) status = 201;
    else if (
      created !== undefined &&
      created < record.at &&
      record.callStatus !== 0 &&
      carriedOut(record.callStatus)
    )
      status = record.downstream === 'sap' ? 409 : 200;
    else if (record.callStatus === 200 || record.callStatus === 202) status = 400;
    else status = record.callStatus;
    return { downstream: record.downstream, at: record.at, status, id: record.id, token: record.token };
  });
};
