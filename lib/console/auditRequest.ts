import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { auditPage } from '../store/auditLog.ts';

/** An audit key as a page ends on (`<ISO time>#<12 hex>`), in base64url: the cursor. */
const AUDIT_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z#[0-9a-f]{12}$/;

const cursorOf = (auditKey: string) => Buffer.from(auditKey).toString('base64url');

const afterOf = (cursor: string | undefined): string | undefined => {
  if (cursor === undefined) return undefined;
  const key = Buffer.from(cursor, 'base64url').toString();
  if (!AUDIT_KEY.test(key)) throw new RequestRefusedError(400, 'cursor is not a cursor this list gave');
  return key;
};

/**
 * `GET /console/api/audit?cursor=` (operators): the audit entries, newest first, a page at a time (`next` while more
 * remain). Entries hold staff emails, actions and record ids only.
 *
 * @example
 * await auditAnswer(event) // 200 {"entries":[{"at":"…","who":"operator@example.com","action":"redrive","records":["3f0c…"]}],"next":"…"}
 */
export const auditAnswer = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  const page = await auditPage(afterOf(event.queryStringParameters?.cursor ?? undefined));
  return jsonResponse(200, { entries: page.entries, ...(page.after ? { next: cursorOf(page.after) } : {}) });
};
