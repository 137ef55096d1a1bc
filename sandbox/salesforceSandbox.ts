import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { caseProblems, type SalesforceError } from '../lib/simulators/salesforceCaseRules.ts';
import { countedApiCall, createApiUsage, type SandboxApiUsage, serveApiUsageControl } from './apiUsage.ts';
import { createSandboxOutage, refuseWhileDown, type SandboxOutage, serveOutageControl } from './outage.ts';
import { COLLECTIONS_PATH, collectionsHandler, salesforceDeliveryCalls } from './salesforceCollections.ts';
import type { SalesforceFault, StoredCase } from './salesforceTypes.ts';

export type { SalesforceFault, StoredCase } from './salesforceTypes.ts';

import {
  type Exchange,
  type LoggedRequest,
  MALFORMED_BODY,
  startSandboxServer,
  takeFault,
} from './server.ts';

/** The sandbox's defaults; `npm start` hands the same values to the CRM adapter. */
export const SALESFORCE_SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  clientId: 'sandbox-client-id',
  clientSecret: 'sandbox-client-secret',
  externalIdField: 'Web_Case_Id__c',
} as const;

export interface SalesforceSandboxOptions {
  /** Default 0: any free port. */
  port?: number;
  host?: string;
  clientId?: string;
  clientSecret?: string;
  /** The Case field upserts go by. */
  externalIdField?: string;
  /** Custom Case fields beyond the default mapping's (text fields), e.g. for a custom mapping file. */
  extraFields?: string[];
  /** The org's daily API allowance reported in `Sforce-Limit-Info`; default 115,000. */
  apiAllowance?: number;
}

export interface SalesforceSandbox {
  /** My Domain and instance URL at once, e.g. `http://127.0.0.1:41235`: the adapter's CRM_BASE_URL. */
  url: string;
  clientId: string;
  clientSecret: string;
  externalIdField: string;
  /** Cases stored, in creation order; updates change them in place. */
  cases: StoredCase[];
  /** Every request received, in order. */
  requests: LoggedRequest[];
  inject(...faults: SalesforceFault[]): void;
  /** Forgets the faults injected and not yet used. */
  clearFaults(): void;
  /** Invalidates every access token issued so far, as a session timeout or a revocation does. */
  expireTokens(): void;
  /** The outage switch (also `POST /_sandbox/outage`): while down every `/services/` request gets 503 and is counted. */
  outage: SandboxOutage;
  /** The org's API usage (also `POST /_sandbox/api-usage`), reported in `Sforce-Limit-Info` on every API answer. */
  apiUsage: SandboxApiUsage;
  stop(): Promise<void>;
}

const UPSERT_PATH = /^\/services\/data\/(v\d+\.\d+)\/sobjects\/([^/]+)\/([^/]+)\/([^/]+)$/;

const defaultErrors = (status: number): SalesforceError[] => {
  const entry = (errorCode: string, message: string): SalesforceError[] => [
    { message, errorCode, fields: [] },
  ];
  switch (status) {
    case 400:
      return entry('INVALID_INPUT', 'The request could not be processed');
    case 401:
      return entry('INVALID_SESSION_ID', 'Session expired or invalid');
    case 403:
      return entry('REQUEST_LIMIT_EXCEEDED', 'TotalRequests Limit exceeded.');
    case 404:
      return entry('NOT_FOUND', 'The requested resource does not exist');
    case 500:
      return entry(
        'UNKNOWN_EXCEPTION',
        'An unexpected error occurred. Please include this ErrorId if you contact support',
      );
    case 503:
      return entry('SERVER_UNAVAILABLE', 'Service temporarily unavailable');
    default:
      return entry('UNKNOWN_EXCEPTION', STATUS_CODES[status] ?? 'Error');
  }
};

/**
 * Starts a stand-in for the Salesforce org (docs/behaviour.md#salesforce-protocol): the client-credentials token
 * endpoint, Case upsert by external id (PATCH: 201 created, or 200 with `created: false` when the external
 * id exists, so a repeated delivery never makes a second case), Salesforce-style field checks and errors.
 * `GET /_sandbox/cases` lists the stored cases for a person watching. Several cases go in one sObject
 * Collections call (salesforceCollections.ts); every API answer carries `Sforce-Limit-Info` (each call counts);
 * `GET /_sandbox/calls` lists the delivery calls received, with how many cases each carried.
 *
 * @example
 * const sf = await startSalesforceSandbox();
 * const crm = createCrmClient({ baseUrl: sf.url, clientId: sf.clientId, clientSecret: sf.clientSecret });
 * sf.inject({ status: 403 }); // REQUEST_LIMIT_EXCEEDED
 * await sf.stop();
 */
export async function startSalesforceSandbox(
  options: SalesforceSandboxOptions = {},
): Promise<SalesforceSandbox> {
  const clientId = options.clientId ?? SALESFORCE_SANDBOX_DEFAULTS.clientId;
  const clientSecret = options.clientSecret ?? SALESFORCE_SANDBOX_DEFAULTS.clientSecret;
  const externalIdField = options.externalIdField ?? SALESFORCE_SANDBOX_DEFAULTS.externalIdField;
  const extraFields = options.extraFields ?? [];

  const cases: StoredCase[] = [];
  const faults: SalesforceFault[] = [];
  const outage = createSandboxOutage();
  const apiUsage = createApiUsage(options.apiAllowance);
  const tokens = new Set<string>();
  let instanceUrl = '';

  /** Applies the fault's delay and answer; true when it answered (or dropped) the request. */
  const applyFault = async (
    exchange: Exchange,
    fault: SalesforceFault | undefined,
    errorBody: (status: number) => unknown,
  ): Promise<boolean> => {
    if (!fault) return false;
    if (fault.loseAnswer) exchange.loseAnswer();
    if (fault.delayMs) await exchange.wait(fault.delayMs);
    if (fault.dropConnection) {
      exchange.drop();
      return true;
    }
    if (fault.status === undefined) return false;
    const body = fault.malformedBody ? MALFORMED_BODY : errorBody(fault.status);
    exchange.reply(fault.status, body, { 'content-type': 'application/json', ...fault.headers });
    return true;
  };

  const issueToken = async (exchange: Exchange): Promise<void> => {
    const oauthError = (status: number) =>
      status === 400
        ? { error: 'invalid_grant', error_description: 'authentication failure' }
        : { error: 'unknown_error', error_description: STATUS_CODES[status] ?? 'error' };
    if (await applyFault(exchange, takeFault(faults, 'token', 'upsert'), oauthError)) return;
    const form = new URLSearchParams(exchange.body);
    if (form.get('grant_type') !== 'client_credentials') {
      exchange.reply(400, { error: 'unsupported_grant_type', error_description: 'grant type not supported' });
      return;
    }
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
      exchange.reply(400, { error: 'invalid_client', error_description: 'invalid client credentials' });
      return;
    }
    const accessToken = `00DSB0000000001!${randomBytes(32).toString('base64url')}`;
    tokens.add(accessToken);
    exchange.reply(200, {
      access_token: accessToken,
      instance_url: instanceUrl,
      id: `${instanceUrl}/id/00DSB0000000001AAA/005SB0000000001AAA`,
      token_type: 'Bearer',
      issued_at: String(Date.now()),
      signature: randomBytes(32).toString('base64'),
      scope: 'api',
    });
  };

  const upsert = async (exchange: Exchange, field: string, externalId: string): Promise<void> => {
    const fault = takeFault(faults, 'upsert', 'upsert');
    const restError = (status: number) =>
      // A real 300 lists the matching records' URLs rather than errors.
      status === 300 && !fault?.errors
        ? [
            `/services/data/v66.0/sobjects/Case/500SB0000000001AAA`,
            `/services/data/v66.0/sobjects/Case/500SB0000000002AAA`,
          ]
        : (fault?.errors ?? defaultErrors(status));
    if (await applyFault(exchange, fault, restError)) return;

    if (field !== externalIdField) {
      exchange.reply(404, [
        {
          message: `Provided external ID field does not exist or is not accessible: ${field}`,
          errorCode: 'NOT_FOUND',
          fields: [],
        },
      ]);
      return;
    }
    if (!String(exchange.headers['content-type']).startsWith('application/json')) {
      exchange.reply(415, [
        { message: 'Content type must be application/json', errorCode: 'UNSUPPORTED_MEDIA_TYPE', fields: [] },
      ]);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      body = undefined;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      exchange.reply(400, [
        {
          message: 'The request body is not a JSON object of Case fields',
          errorCode: 'JSON_PARSER_ERROR',
          fields: [],
        },
      ]);
      return;
    }
    const fields = body as Record<string, unknown>;
    const existing = cases.find((stored) => stored.externalId === externalId);
    const problems = caseProblems(fields, { externalIdField, creating: !existing, extraFields });
    if (problems.length > 0) {
      exchange.reply(400, problems);
      return;
    }
    const now = new Date().toISOString();
    let stored: StoredCase;
    if (existing) {
      Object.assign(existing.fields, fields);
      existing.updatedAt = now;
      stored = existing;
    } else {
      stored = {
        id: `500SB${String(cases.length + 1).padStart(10, '0')}AAA`,
        externalId,
        fields,
        createdAt: now,
        updatedAt: now,
      };
      cases.push(stored);
    }
    const status = existing ? 200 : 201;
    if (fault?.malformedBody) {
      exchange.reply(status, MALFORMED_BODY, { 'content-type': 'application/json' });
      return;
    }
    exchange.reply(status, { id: stored.id, success: true, errors: [], created: !existing });
  };

  const collections = collectionsHandler({
    externalIdField,
    extraFields,
    cases,
    nextFault: () => takeFault(faults, 'collections', 'upsert'),
    applyFault: (exchange, fault) =>
      applyFault(exchange, fault, (status) => fault?.errors ?? defaultErrors(status)),
  });

  const handle = async (received: Exchange): Promise<void> => {
    const path = received.url.pathname;
    if (received.method === 'GET' && path === '/_sandbox/cases') {
      received.reply(200, cases);
      return;
    }
    if (received.method === 'GET' && path === '/_sandbox/calls') {
      received.reply(200, salesforceDeliveryCalls(server.requests));
      return;
    }
    if (serveOutageControl(received, outage) || serveApiUsageControl(received, apiUsage)) return;
    // Down for maintenance: 503 to everything, the token endpoint included, before any other check.
    const down = { delivery: received.method === 'PATCH', body: defaultErrors(503) };
    if (refuseWhileDown(received, outage, down)) return;
    // Every REST API call counts against the org's allowance, and its answer says how much is used.
    const exchange = path.startsWith('/services/data/') ? countedApiCall(received, apiUsage) : received;
    if (exchange.method === 'POST' && path === '/services/oauth2/token') return issueToken(exchange);
    if (!path.startsWith('/services/data/')) {
      exchange.reply(404, defaultErrors(404));
      return;
    }
    const authorization = exchange.headers.authorization ?? '';
    if (!authorization.startsWith('Bearer ') || !tokens.has(authorization.slice('Bearer '.length))) {
      exchange.reply(401, defaultErrors(401));
      return;
    }
    if (exchange.method === 'PATCH' && COLLECTIONS_PATH.test(path)) return collections(exchange);
    const match = UPSERT_PATH.exec(path);
    if (match?.[2] !== 'Case') {
      exchange.reply(404, defaultErrors(404));
      return;
    }
    const field = decodeURIComponent(match[3]);
    const externalId = decodeURIComponent(match[4]);
    if (exchange.method === 'PATCH') return upsert(exchange, field, externalId);
    if (exchange.method === 'GET') {
      const stored = cases.find((candidate) => candidate.externalId === externalId);
      if (stored && field === externalIdField) {
        exchange.reply(200, {
          attributes: { type: 'Case' },
          Id: stored.id,
          [externalIdField]: externalId,
          ...stored.fields,
        });
      } else {
        exchange.reply(404, defaultErrors(404));
      }
      return;
    }
    exchange.reply(405, [
      {
        message: `HTTP Method '${exchange.method}' not allowed. Allowed are GET,PATCH`,
        errorCode: 'METHOD_NOT_ALLOWED',
        fields: [],
      },
    ]);
  };

  const server = await startSandboxServer(handle, {
    name: 'Salesforce sandbox',
    port: options.port,
    host: options.host ?? SALESFORCE_SANDBOX_DEFAULTS.host,
  });
  instanceUrl = server.url;

  return {
    url: server.url,
    clientId,
    clientSecret,
    externalIdField,
    cases,
    requests: server.requests,
    inject: (...more) => {
      faults.push(...more);
    },
    clearFaults: () => {
      faults.length = 0;
    },
    expireTokens: () => tokens.clear(),
    outage,
    apiUsage,
    stop: () => server.stop(),
  };
}
