import type { RecordKind } from './types.ts';

const required = (name: string, env: NodeJS.ProcessEnv): string => {
  const value = env[name];
  if (!value) throw new Error(`setting ${name} is not set`);
  return value;
};

/** Queue URL of a kind of record. */
export const queueUrlFor = (kind: RecordKind, env = process.env): string =>
  required(kind === 'salesRegistration' ? 'SALES_REGISTRATION_QUEUE_URL' : 'CASE_QUEUE_URL', env);

/** The DynamoDB table holding status records, duplicate detection and idempotency keys. */
export const recordsTable = (env = process.env): string => required('RECORDS_TABLE', env);

/** Local debug mode: error answers may carry a stack trace. Never set on AWS. */
export const debugMode = (env = process.env): boolean => env.DEBUG_ERRORS === 'true';
