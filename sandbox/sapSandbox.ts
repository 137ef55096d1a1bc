import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { registrationProblem, sameContent } from '../lib/simulators/sapRegistrationRules.ts';
import { createSandboxOutage, refuseWhileDown, type SandboxOutage, serveOutageControl } from './outage.ts';
import { RegistrationBook } from './registrationBook.ts';
import { sapBatchHandler, sapDeliveryCalls } from './sapBatch.ts';
import type { SapFault, StoredRegistration } from './sapTypes.ts';

export type { SapFault, StoredRegistration } from './sapTypes.ts';

import {
  type Exchange,
  type LoggedRequest,
  MALFORMED_BODY,
  parseCookies,
  startSandboxServer,
  takeFault,
} from './server.ts';

/** The sandbox's defaults; `npm start` hands the same values to the ERP adapter. */
export const SAP_SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  username: 'SANDBOX',
  password: 'sandbox',
  servicePath: '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet',
} as const;

export interface SapSandboxOptions {
  /** Default 0: any free port. */
  port?: number;
  host?: string;
  username?: string;
  password?: string;
  /** Path of the entity set; its parent is the service root. */
  servicePath?: string;
}

export interface SapSandbox {
  /** Base URL, e.g. `http://127.0.0.1:41234`: the adapter's ERP_BASE_URL. */
  url: string;
  servicePath: string;
  username: string;
  password: string;
  /** Registrations stored, in order. */
  registrations: StoredRegistration[];
  /** Every request received, in order. */
  requests: LoggedRequest[];
  inject(...faults: SapFault[]): void;
  /** Forgets the faults injected and not yet used. */
  clearFaults(): void;
  /** Invalidates every CSRF token issued so far, as a session timeout or an ERP restart does. */
  expireCsrfTokens(): void;
  /** The outage switch (also `POST /_sandbox/outage`): while down every service request gets 503 and is counted. */
  outage: SandboxOutage;
  stop(): Promise<void>;
}

const SESSION_COOKIE = 'SAP_SESSIONID_SBX_100';

const odataError = (code: string, message: string) => ({
  error: {
    code,
    message: { lang: 'en', value: message },
    innererror: { transactionid: randomBytes(16).toString('hex') },
  },
});

/**
 * Starts a stand-in for the SAP Gateway OData v2 service (docs/behaviour.md#sap-protocol): Basic authentication,
 * CSRF tokens bound to a session cookie, the SalesRegistration entity set, SAP-style errors.
 *
 * Exactly-once: a POST repeating a stored RegistrationId is refused with **409** naming that RegistrationId and
 * the document already created (`RegistrationId <id> already registered as document <n>`), and creates
 * nothing, as the contract has SAP do. That is what the worker meets when its earlier request got through but
 * the answer was lost (or it died before writing the status); the service counts a 409 naming its own
 * RegistrationId as delivered. A FrameNum already registered under another RegistrationId is refused with 409
 * too, naming the frame.
 *
 * Also serves `GET {serviceRoot}/SalesRegistrationSet` (authenticated, OData) and
 * `GET /_sandbox/registrations` (plain JSON, for a person watching). `POST {serviceRoot}/$batch` takes several
 * registrations in one call (sapBatch.ts); `GET /_sandbox/calls` lists the delivery calls received, with how
 * many registrations each carried.
 *
 * @example
 * const sap = await startSapSandbox();
 * const erp = createErpClient({ baseUrl: sap.url, servicePath: sap.servicePath, username: sap.username,
 *   password: sap.password });
 * sap.inject({ status: 503 }, { csrfExpired: true });
 * await sap.stop();
 */
export async function startSapSandbox(options: SapSandboxOptions = {}): Promise<SapSandbox> {
  const username = options.username ?? SAP_SANDBOX_DEFAULTS.username;
  const password = options.password ?? SAP_SANDBOX_DEFAULTS.password;
  const servicePath = `/${(options.servicePath ?? SAP_SANDBOX_DEFAULTS.servicePath).replace(/^\/+|\/+$/g, '')}`;
  const serviceRoot = servicePath.slice(0, servicePath.lastIndexOf('/'));
  const entitySetName = servicePath.slice(servicePath.lastIndexOf('/') + 1);
  const expectedAuthorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

  const book = new RegistrationBook();
  const registrations = book.all;
  const faults: SapFault[] = [];
  const outage = createSandboxOutage();
  /** CSRF token → the session id it was issued with. */
  const tokens = new Map<string, string>();
  let baseUrl = '';

  const entityOf = (stored: StoredRegistration) => {
    const uri = `${baseUrl}${servicePath}('${stored.DocumentNumber}')`;
    return {
      __metadata: { id: uri, uri, type: 'ZSD_SALES_REGISTRATION_SRV.SalesRegistration' },
      DocumentNumber: stored.DocumentNumber,
      ...stored.entity,
    };
  };

  /** Applies the fault's delay and answer; true when it answered (or dropped) the request. */
  const applyFault = async (exchange: Exchange, fault: SapFault | undefined): Promise<boolean> => {
    if (!fault) return false;
    if (fault.loseAnswer) exchange.loseAnswer();
    if (fault.delayMs) await exchange.wait(fault.delayMs);
    if (fault.dropConnection) {
      exchange.drop();
      return true;
    }
    if (fault.csrfExpired) tokens.clear();
    if (fault.status === undefined) return false;
    const message = fault.message ?? STATUS_CODES[fault.status] ?? 'Error';
    const body = fault.malformedBody ? MALFORMED_BODY : odataError('SY/530', message);
    exchange.reply(fault.status, body, { 'content-type': 'application/json', ...fault.headers });
    return true;
  };

  const issueToken = (exchange: Exchange): Record<string, string | string[]> => {
    const token = randomBytes(18).toString('base64');
    const session = randomBytes(24).toString('base64url');
    tokens.set(token, session);
    const client = exchange.url.searchParams.get('sap-client') ?? '100';
    return {
      'x-csrf-token': token,
      'set-cookie': [
        `${SESSION_COOKIE}=${session}; path=/; HttpOnly`,
        `sap-usercontext=sap-client=${client}; path=/`,
      ],
    };
  };

  const hasValidToken = (exchange: Exchange): boolean => {
    const token = exchange.headers['x-csrf-token'];
    if (typeof token !== 'string') return false;
    const session = tokens.get(token);
    return session !== undefined && parseCookies(exchange.headers.cookie).get(SESSION_COOKIE) === session;
  };

  const create = async (exchange: Exchange): Promise<void> => {
    const fault = takeFault(faults, 'post', 'post');
    if (await applyFault(exchange, fault)) return;
    if (!hasValidToken(exchange)) {
      exchange.reply(403, 'CSRF token validation failed', { 'x-csrf-token': 'Required' });
      return;
    }
    let entity: unknown;
    try {
      entity = JSON.parse(exchange.body);
    } catch {
      entity = undefined;
    }
    if (typeof entity !== 'object' || entity === null || Array.isArray(entity)) {
      exchange.reply(400, odataError('/IWFND/CM_MGW/004', 'The request body is not a valid JSON entity'));
      return;
    }
    const record = entity as Record<string, unknown>;
    const problem = registrationProblem(record);
    if (problem) {
      exchange.reply(400, odataError('ZSD_REG/001', problem));
      return;
    }
    const answer = (status: number, stored: StoredRegistration, headers: Record<string, string> = {}) =>
      fault?.malformedBody
        ? exchange.reply(status, MALFORMED_BODY, { 'content-type': 'application/json', ...headers })
        : exchange.reply(status, { d: entityOf(stored) }, headers);

    const repeat = book.withId(record.RegistrationId);
    if (repeat) {
      // A repeated RegistrationId is refused with 409 naming it; nothing is created (docs/behaviour.md#sap-protocol).
      const differs = sameContent(repeat.entity, record) ? '' : ' with different content';
      exchange.reply(
        409,
        odataError(
          'ZSD_REG/004',
          `RegistrationId ${repeat.RegistrationId} already registered as document ${repeat.DocumentNumber}${differs}`,
        ),
      );
      return;
    }
    const sameFrame = book.withFrame(record.FrameNum);
    if (sameFrame) {
      exchange.reply(
        409,
        odataError(
          'ZSD_REG/003',
          `Frame number ${sameFrame.FrameNum} is already registered (document ${sameFrame.DocumentNumber})`,
        ),
      );
      return;
    }
    const stored: StoredRegistration = {
      DocumentNumber: book.nextDocumentNumber(),
      RegistrationId: record.RegistrationId as string,
      FrameNum: record.FrameNum as string,
      entity: record,
      createdAt: new Date().toISOString(),
    };
    book.add(stored);
    answer(201, stored, { location: `${baseUrl}${servicePath}('${stored.DocumentNumber}')` });
  };

  const batch = sapBatchHandler({
    entitySetName,
    book,
    entityOf,
    hasValidToken,
    nextFault: () => takeFault(faults, 'batch', 'post'),
    applyFault,
    odataError,
  });

  const handle = async (exchange: Exchange): Promise<void> => {
    const path = exchange.url.pathname;
    if (exchange.method === 'GET' && path === '/_sandbox/registrations') {
      exchange.reply(200, registrations);
      return;
    }
    if (exchange.method === 'GET' && path === '/_sandbox/calls') {
      exchange.reply(200, sapDeliveryCalls(server.requests, servicePath));
      return;
    }
    if (serveOutageControl(exchange, outage)) return;
    // A maintenance window: the system answers nothing but 503, before authentication or routing.
    const down = {
      delivery: exchange.method === 'POST',
      body: odataError('/IWFND/CM_BEC/026', 'Service unavailable'),
    };
    if (refuseWhileDown(exchange, outage, down)) return;
    if (path !== serviceRoot && !path.startsWith(`${serviceRoot}/`)) {
      exchange.reply(404, odataError('/IWFND/MED/170', `No service found for ${path}`));
      return;
    }
    if (exchange.headers.authorization !== expectedAuthorization) {
      exchange.reply(401, 'Logon failed', {
        'www-authenticate': 'Basic realm="SAP NetWeaver Application Server [SBX/100]"',
      });
      return;
    }
    const target = path.replace(/\/+$/, '');
    if (exchange.method === 'POST' && target === servicePath) return create(exchange);
    if (exchange.method === 'POST' && target === `${serviceRoot}/$batch`) return batch(exchange);

    if (exchange.method === 'GET') {
      let headers: Record<string, string | string[]> = {};
      if (String(exchange.headers['x-csrf-token']).toLowerCase() === 'fetch') {
        if (await applyFault(exchange, takeFault(faults, 'csrf', 'post'))) return;
        headers = issueToken(exchange);
      }
      if (target === serviceRoot) {
        exchange.reply(200, { d: { EntitySets: [entitySetName] } }, headers);
        return;
      }
      if (target === servicePath) {
        exchange.reply(200, { d: { results: registrations.map(entityOf) } }, headers);
        return;
      }
    }
    if (target === servicePath) {
      exchange.reply(405, odataError('/IWFND/MED/056', `Method ${exchange.method} is not allowed here`));
      return;
    }
    exchange.reply(404, odataError('/IWFND/MED/170', `Resource not found for segment ${path}`));
  };

  const server = await startSandboxServer(handle, {
    name: 'SAP sandbox',
    port: options.port,
    host: options.host ?? SAP_SANDBOX_DEFAULTS.host,
  });
  baseUrl = server.url;

  return {
    url: server.url,
    servicePath,
    username,
    password,
    registrations,
    requests: server.requests,
    inject: (...more) => {
      faults.push(...more);
    },
    clearFaults: () => {
      faults.length = 0;
    },
    expireCsrfTokens: () => tokens.clear(),
    outage,
    stop: () => server.stop(),
  };
}
