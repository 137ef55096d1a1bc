/** The org's daily API allowance as Salesforce reports it on every REST answer. */
export interface ApiUsage {
  /** Calls spent in the last 24 hours, by every integration of the org. */
  used: number;
  /** The org's allowance for 24 hours. */
  allowed: number;
}

/** `api-usage=<used>/<allowed>`, not the `per-app-api-usage=…` entry that may follow it. */
const API_USAGE = /(?:^|[\s;,])api-usage=(\d+)\/(\d+)/i;

/**
 * Reads the `Sforce-Limit-Info` header of a Salesforce answer (`api-usage=18/15000`, possibly followed by
 * `; per-app-api-usage=17/250(appName=…)`). Undefined when the header is absent or does not say it.
 *
 * @example
 * parseApiUsage('api-usage=92000/115000; per-app-api-usage=17/250(appName=gateway)'); // { used: 92000, allowed: 115000 }
 * parseApiUsage(null); // undefined
 */
export function parseApiUsage(header: string | null | undefined): ApiUsage | undefined {
  const match = header ? API_USAGE.exec(header) : null;
  if (!match) return undefined;
  const used = Number(match[1]);
  const allowed = Number(match[2]);
  return Number.isSafeInteger(used) && Number.isSafeInteger(allowed) && allowed > 0
    ? { used, allowed }
    : undefined;
}
