import { type AuditAction, putAuditEntry } from '../store/auditLog.ts';
import type { ConsolePerson } from './types.ts';

/**
 * Writes the audit entry of a person's action or view: who (the staff member's email from the ID token), when, what,
 * which records, and the client for a webhook's action. Never any customer's data: ids only.
 *
 * @example
 * await audit(person, 'view-customer', { records: ['3f0c…'] });
 */
export const audit = (
  person: ConsolePerson,
  action: AuditAction,
  about: { records?: readonly string[]; client?: string },
): Promise<void> =>
  putAuditEntry({
    at: new Date().toISOString(),
    who: person.email,
    action,
    records: [...(about.records ?? [])],
    ...(about.client ? { client: about.client } : {}),
  });
