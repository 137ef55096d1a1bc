import type { Exchange } from './server.ts';

/** The org's API allowance the sandbox reports; tests may move `used` close to `allowed`. */
export interface SandboxApiUsage {
  used: number;
  allowed: number;
}

/** An Enterprise org of 15 licences: 100,000 calls plus 1,000 per licence in 24 hours. */
export const DEFAULT_API_ALLOWANCE = 115_000;

/**
 * Counts a REST API call (any `/services/data/…` request; token requests do not count, as in Salesforce) and
 * makes every answer to it carry `Sforce-Limit-Info: api-usage=<used>/<allowed>`.
 *
 * @example
 * const usage = { used: 0, allowed: DEFAULT_API_ALLOWANCE };
 * startSandboxServer((exchange) => handle(countApiCall(exchange, usage)), { name: 'Salesforce sandbox' });
 */
export function countApiCall(exchange: Exchange, usage: SandboxApiUsage): Exchange {
  if (!exchange.url.pathname.startsWith('/services/data/')) return exchange;
  usage.used += 1;
  const header = `api-usage=${usage.used}/${usage.allowed}`;
  return {
    ...exchange,
    reply: (status, body, headers = {}) =>
      exchange.reply(status, body, { 'sforce-limit-info': header, ...headers }),
  };
}
