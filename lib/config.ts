import { required } from './settings.ts';
import type { RecordKind } from './types.ts';

/** Queue URL of a kind of record. */
export const queueUrlFor = (kind: RecordKind, env = process.env): string => {
  const name = kind === 'salesRegistration' ? 'SALES_REGISTRATION_QUEUE_URL' : 'CASE_QUEUE_URL';
  return required(name, env[name]);
};

/** The DynamoDB table holding status records, duplicate detection and idempotency keys. */
export const recordsTable = (env = process.env): string => required('RECORDS_TABLE', env.RECORDS_TABLE);

/** Local debug mode: error answers may carry a stack trace. Never set on AWS. */
export const debugMode = (env = process.env): boolean => env.DEBUG_ERRORS === 'true';
