import { randomBytes } from 'node:crypto';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from '../aws/clients.ts';
import { PutItemCommand, QueryCommand } from '../aws/jsonProtocol/dynamodb.ts';
import { recordsTable } from '../settings/settings.ts';
import type { Item } from './table.ts';

/** What the console audits: each action, and every opening of a record's customer section. */
export type AuditAction = 'redrive' | 'enable-webhook' | 'resend-webhook' | 'view-customer';

/** One audit entry: who (a staff member's email, from the ID token), when, what, which records. Nothing else. */
export interface AuditEntry {
  at: string;
  who: string;
  action: AuditAction;
  records: string[];
  client?: string;
}

/** The sparse index of audit entries (serverless.yml): one partition, newest first by `auditKey`. */
export const AUDIT_INDEX = 'audit';
/** The one partition of the audit index: the console's actions are a few a minute at most, far below its limits. */
const AUDIT_PARTITION = 'console';
/** The records table's key prefix of audit items (no record id holds a `#`). */
export const AUDIT_PK_PREFIX = 'audit#';
/** Audit entries are kept this long, then expire by the table's TTL (`expiresAt`). */
export const AUDIT_KEPT_DAYS = 365;
/** Entries per page of `GET audit`. */
export const AUDIT_PAGE = 50;

/**
 * Writes an audit entry as an item of its own in the records table (`audit#<at>#<random>`), in the sparse `audit`
 * index, expiring after {@link AUDIT_KEPT_DAYS}.
 *
 * @example
 * await putAuditEntry({ at: new Date().toISOString(), who: 'operator@example.com', action: 'redrive', records: ['3f0c…'] });
 */
export const putAuditEntry = async (entry: AuditEntry): Promise<void> => {
  const auditKey = `${entry.at}#${randomBytes(6).toString('hex')}`;
  await dynamoClient().send(
    new PutItemCommand({
      TableName: recordsTable(),
      Item: marshall(
        {
          pk: `${AUDIT_PK_PREFIX}${auditKey}`,
          auditLog: AUDIT_PARTITION,
          auditKey,
          ...entry,
          expiresAt: Math.floor(Date.parse(entry.at) / 1000) + AUDIT_KEPT_DAYS * 86_400,
        },
        { removeUndefinedValues: true },
      ),
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
};

/** A page of audit entries, newest first, and the key after its last one (for the next page) if any. */
export interface AuditPage {
  entries: AuditEntry[];
  after?: string;
}

const entryOf = (item: Item): AuditEntry => {
  const { at, who, action, records, client } = unmarshall(item) as AuditEntry;
  return { at, who, action, records: records ?? [], ...(client ? { client } : {}) };
};

/**
 * Reads a page of audit entries, newest first, from the `audit` index: one Query, never a scan.
 *
 * @param after the `auditKey` of the last entry of the previous page.
 * @example
 * const { entries, after } = await auditPage();
 */
export const auditPage = async (after?: string): Promise<AuditPage> => {
  const out = await dynamoClient().send(
    new QueryCommand({
      TableName: recordsTable(),
      IndexName: AUDIT_INDEX,
      KeyConditionExpression: after ? 'auditLog = :log AND auditKey < :after' : 'auditLog = :log',
      ExpressionAttributeValues: {
        ':log': { S: AUDIT_PARTITION },
        ...(after ? { ':after': { S: after } } : {}),
      },
      ScanIndexForward: false,
      Limit: AUDIT_PAGE,
    }),
  );
  const items = out.Items ?? [];
  const last = out.LastEvaluatedKey?.auditKey?.S;
  return { entries: items.map(entryOf), ...(last ? { after: last } : {}) };
};
