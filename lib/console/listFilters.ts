import { clientsConfig } from '../clients/clientsConfig.ts';
import { RequestRefusedError } from '../http/errors.ts';
import type { RecordStatus } from '../records/types.ts';
import { RECORD_STATUSES } from '../store/statusIndex.ts';
import { type ConsoleKind, STORE_KIND } from './rows.ts';

/** What `GET records` narrows by (all optional; absent: every record). */
export interface ListFilters {
  /** A frame number, a record id or an SAP document number / Salesforce id, trimmed. */
  q?: string;
  kind?: ConsoleKind;
  state?: RecordStatus;
  client?: string;
  mode?: 'live' | 'test';
  /** Accepted at or after (ISO, inclusive). */
  from?: string;
  /** Accepted before (ISO, exclusive): a date alone means up to the end of that day. */
  to?: string;
}

const KINDS = Object.keys(STORE_KIND) as ConsoleKind[];
const MODES = ['live', 'test'] as const;
/** A frame number is at most 30 characters (schemas/salesRegistration.schema.json), a Salesforce id 18. */
const MAX_Q = 64;
/** Printable characters without spaces inside: what frame numbers and downstream ids are made of. */
const Q_SHAPE = /^[\x21-\x7e]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

const refuse = (message: string): never => {
  throw new RequestRefusedError(400, message);
};

const oneOf = <T extends string>(name: string, value: string | undefined, allowed: readonly T[]) => {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) refuse(`${name} must be one of ${allowed.join(', ')}`);
  return value as T;
};

/** A date (`YYYY-MM-DD`, UTC) or a date-time with its offset, as ISO; `endOfDay` moves a date to the next day. */
const instant = (name: string, value: string | undefined, endOfDay: boolean): string | undefined => {
  if (value === undefined) return undefined;
  const isDate = DATE.test(value);
  const ms = isDate || DATE_TIME.test(value) ? Date.parse(isDate ? `${value}T00:00:00Z` : value) : Number.NaN;
  if (Number.isNaN(ms))
    return refuse(`${name} must be a date (YYYY-MM-DD) or a date-time with its offset (ISO 8601)`);
  return new Date(isDate && endOfDay ? ms + 86_400_000 : ms).toISOString();
};

/** The owners records are kept under: the configured clients, and the browser forms of the allowed origins. */
const knownOwners = (): string[] => [
  ...clientsConfig.clients.map((client) => client.name),
  ...clientsConfig.browserForms.allowedOrigins.map((origin) => `browser-form:${origin}`),
];

/**
 * The filters of a `GET records` query string. Every value is checked before anything is read: a bad one is a 400
 * naming the parameter and its rule, and so is a parameter the route does not take (a misspelt filter would
 * otherwise list everything).
 *
 * @throws RequestRefusedError (400)
 * @example
 * listFiltersOf({ kind: 'crmCase', state: 'failed', from: '2026-11-01' }) // { kind: 'crmCase', state: 'failed', from: '2026-11-01T00:00:00.000Z' }
 */
export const listFiltersOf = (
  query: Readonly<Record<string, string | undefined>> | null,
  allowed: readonly string[] = ['q', 'kind', 'state', 'client', 'mode', 'from', 'to', 'cursor'],
): ListFilters => {
  const params = Object.fromEntries(Object.entries(query ?? {}).filter(([, value]) => value !== ''));
  const unknown = Object.keys(params).find((name) => !allowed.includes(name));
  if (unknown !== undefined)
    refuse(`${unknown.slice(0, 40)} is not a parameter of this list (${allowed.join(', ')})`);
  const q = params.q?.trim();
  if (q !== undefined && (q.length > MAX_Q || !Q_SHAPE.test(q)))
    refuse(
      `q must be a frame number, a record id or an SAP / Salesforce id: 1 to ${MAX_Q} characters without spaces`,
    );
  const client = params.client;
  if (client !== undefined && !knownOwners().includes(client))
    refuse('client must be the name of a configured client (config/clients.json)');
  const from = instant('from', params.from, false);
  const to = instant('to', params.to, true);
  if (from !== undefined && to !== undefined && from >= to) refuse('from must be before to');
  return {
    ...(q ? { q } : {}),
    ...(params.kind !== undefined ? { kind: oneOf('kind', params.kind, KINDS) } : {}),
    ...(params.state !== undefined ? { state: oneOf('state', params.state, RECORD_STATUSES) } : {}),
    ...(client !== undefined ? { client } : {}),
    ...(params.mode !== undefined ? { mode: oneOf('mode', params.mode, MODES) } : {}),
    ...(from !== undefined ? { from } : {}),
    ...(to !== undefined ? { to } : {}),
  };
};
