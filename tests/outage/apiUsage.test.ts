/** Reading Salesforce's `Sforce-Limit-Info` header for the CRM's allowance hold. */
import { describe, expect, it } from 'vitest';
import { parseApiUsage } from '../../lib/outage/apiUsage.ts';

describe('parseApiUsage', () => {
  it.each([
    ['api-usage=18/5000', { used: 18, allowed: 5000 }],
    [
      'api-usage=80000/100000; per-app-api-usage=17/250(appName=sample-app)',
      { used: 80000, allowed: 100000 },
    ],
    ['per-app-api-usage=17/250(appName=sample-app); api-usage=5/10', { used: 5, allowed: 10 }],
  ])('reads the org-wide usage of %s', (header, usage) => {
    expect(parseApiUsage(header)).toEqual(usage);
  });

  it.each([
    [undefined],
    [null],
    [''],
    ['per-app-api-usage=17/250(appName=sample-app)'],
    ['api-usage=5/0'],
    ['api-usage=a/b'],
  ])('learns nothing from %s', (header) => {
    expect(parseApiUsage(header)).toBeUndefined();
  });
});
