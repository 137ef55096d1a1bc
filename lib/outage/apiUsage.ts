import type { ApiUsage } from './types.ts';

/** The org-wide entry of `Sforce-Limit-Info` (not `per-app-api-usage`, which is one connected app's share). */
const ORG_USAGE = /(?:^|[;,\s])api-usage=(\d+)\/(\d+)/;

/**
 * Reads the org's API usage from a Salesforce answer's `Sforce-Limit-Info` header; undefined when absent or
 * unreadable (the hold then learns nothing about the allowance from that answer).
 *
 * @example
 * parseApiUsage('api-usage=18/5000; per-app-api-usage=17/250(appName=sample-app)') // { used: 18, allowed: 5000 }
 * parseApiUsage(undefined) // undefined
 */
export const parseApiUsage = (header: string | null | undefined): ApiUsage | undefined => {
  const match = header ? ORG_USAGE.exec(header) : null;
  if (!match) return undefined;
  const [used, allowed] = [Number(match[1]), Number(match[2])];
  return allowed > 0 ? { used, allowed } : undefined;
};
