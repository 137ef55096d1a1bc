import { jsonObjectBody } from './controlBody.ts';
import type { Exchange } from './server.ts';

/** The org's daily API allowance as the Salesforce sandbox reports it. */
export interface ApiUsageState {
  used: number;
  allowed: number;
}

/**
 * The Salesforce sandbox's API usage: every REST API call (`/services/data/…`) counts one, as in a real org, and
 * every answer to one carries `Sforce-Limit-Info: api-usage=<used>/<allowed>`. An operator or a test sets it to
 * play an org whose allowance other integrations have nearly spent.
 */
export interface SandboxApiUsage {
  state(): ApiUsageState;
  set(change: Partial<ApiUsageState>): void;
  /** Counts one API call. */
  count(): void;
  /** The header's value, e.g. `api-usage=25/100000`. */
  header(): string;
}

/** An Enterprise org of 15 licences: 100,000 calls plus 1,000 per licence in 24 hours (far above a local run). */
export const DEFAULT_API_ALLOWANCE = 115_000;

/**
 * Creates the usage counter, at 0 of `allowed` (default {@link DEFAULT_API_ALLOWANCE}).
 *
 * @example
 * const usage = createApiUsage();
 * usage.set({ used: 80_000 });
 * usage.header(); // 'api-usage=80000/115000'
 */
export const createApiUsage = (allowed = DEFAULT_API_ALLOWANCE): SandboxApiUsage => {
  const usage: ApiUsageState = { used: 0, allowed };
  return {
    state: () => ({ ...usage }),
    set(change) {
      Object.assign(usage, change);
    },
    count() {
      usage.used++;
    },
    header: () => `api-usage=${usage.used}/${usage.allowed}`,
  };
};

/**
 * An exchange whose every answer carries the usage header, counting the call first.
 *
 * @example
 * const exchange = countedApiCall(raw, usage);
 */
export const countedApiCall = (exchange: Exchange, usage: SandboxApiUsage): Exchange => {
  usage.count();
  return {
    ...exchange,
    reply: (status, body, headers = {}) =>
      exchange.reply(status, body, { ...headers, 'sforce-limit-info': usage.header() }),
  };
};

/**
 * Serves `GET /_sandbox/api-usage` and `POST /_sandbox/api-usage` with `{"used": n, "allowed": n}` (either or
 * both; whole numbers, `allowed` at least 1). Returns true when the request was one of those.
 *
 * @example
 * if (serveApiUsageControl(exchange, usage)) return;
 */
export const serveApiUsageControl = (exchange: Exchange, usage: SandboxApiUsage): boolean => {
  if (exchange.url.pathname !== '/_sandbox/api-usage') return false;
  if (exchange.method === 'GET') {
    exchange.reply(200, usage.state());
    return true;
  }
  if (exchange.method !== 'POST') {
    exchange.reply(405, { error: 'use GET or POST on /_sandbox/api-usage' });
    return true;
  }
  const body = jsonObjectBody(exchange);
  if (typeof body === 'string') {
    exchange.reply(400, { error: body });
    return true;
  }
  const { used = usage.state().used, allowed = usage.state().allowed } = body;
  if (!Number.isInteger(used) || (used as number) < 0) {
    exchange.reply(400, { error: 'field used: must be a whole number of at least 0' });
    return true;
  }
  if (!Number.isInteger(allowed) || (allowed as number) < 1) {
    exchange.reply(400, { error: 'field allowed: must be a whole number of at least 1' });
    return true;
  }
  usage.set({ used: used as number, allowed: allowed as number });
  exchange.reply(200, usage.state());
  return true;
};
