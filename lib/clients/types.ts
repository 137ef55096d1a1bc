/** A caller of the API, as declared in config/clients.json. */
export interface Client {
  name: string;
  description?: string;
  /** Dealer numbers (4 digits) and business-partner numbers (6 digits) it may register sales for. */
  dealers: number[];
  throttle?: { rateLimit: number; burstLimit: number };
  quota?: { limit: number; period: 'DAY' | 'WEEK' | 'MONTH' };
  /** Where the client's own records' state changes are sent (see docs/design.md, "Events and webhooks"). */
  webhook?: Webhook;
  /**
   * `test`: the client's records are answered by the built-in SAP and Salesforce simulators and never reach the real
   * ones (docs/API.md, "Test mode"); `live` (the default): they are delivered.
   */
  mode?: ClientMode;
}

/** Whether a client's records are delivered (`live`) or answered by the simulators (`test`). */
export type ClientMode = 'live' | 'test';

/**
 * Whether a caller's records are test records (a test client's; a browser form's never are).
 *
 * @example
 * isTestCaller({ kind: 'client', client: { name: 'acme-test', dealers: [1234], mode: 'test' } }) // true
 */
export const isTestCaller = (caller: Caller): boolean =>
  caller.kind === 'client' && caller.client.mode === 'test';

/**
 * A client's webhook: each state change of the client's records is posted to `url`, signed per Standard Webhooks
 * with the client's `whsec_` secret of the stage (lib/webhooks; on AWS in Secrets Manager as
 * `<service>/<stage>/webhooks/<client>`, locally in `.data/webhook-secrets.json`).
 */
export interface Webhook {
  /** https:// (http:// only for localhost or 127.0.0.1, which only npm start can reach). */
  url: string;
  /** Calls per second the webhook gets at most (1 to 300; 10 when omitted). */
  rateLimitPerSecond?: number;
}

/** Key-less case posts from web pages (off unless configured). */
export interface BrowserForms {
  enabled: boolean;
  /** Origins (scheme://host[:port]) whose pages may post cases without a key, and where the browser may be sent back. */
  allowedOrigins: string[];
  throttle?: { rateLimit: number; burstLimit: number };
}

export interface ClientsConfig {
  clients: Client[];
  browserForms: BrowserForms;
}

/** Who is calling: a configured client, or a web page of an allowed origin posting a case without a key. */
export type Caller = { kind: 'client'; client: Client } | { kind: 'browserForm'; origin: string };

/** The name a caller's records are kept under (status look-ups of other callers' records answer 404). */
export const callerName = (caller: Caller): string =>
  caller.kind === 'client' ? caller.client.name : `browser-form:${caller.origin}`;
