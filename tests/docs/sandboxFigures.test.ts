/**
 * What the operations guide says of the sandboxes' defaults is what they do: a reader who plays the Salesforce
 * allowance from the guide's figure must see the figure `Sforce-Limit-Info` reports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
import { createApiUsage, DEFAULT_API_ALLOWANCE } from '../../sandbox/apiUsage.ts';

/** The allowance the guide quotes as the sandbox's default: "an allowance (<n> a day by default". */
const quotedAllowance = (guide: string): number | undefined => {
  const match = /an allowance \(([\d,]+) a day by default/.exec(guide.replace(/\s+/g, ' '));
  return match ? Number(match[1].replaceAll(',', '')) : undefined;
};

describe('the sandboxes as the operations guide describes them', () => {
  it("quotes the Salesforce sandbox's default daily API allowance as it reports it", () => {
    // Prepare
    const guide = readFileSync(join(projectRoot, 'docs/operations.md'), 'utf8');
    // Act
    const reported = Number(/\/(\d+)$/.exec(createApiUsage().header())?.[1]);
    // Assess
    expect(quotedAllowance(guide)).toBe(reported);
    expect(reported).toBe(DEFAULT_API_ALLOWANCE);
  });

  it('control: a guide quoting another figure is found', () => {
    expect(quotedAllowance('an allowance (100,000 a day by default)')).not.toBe(DEFAULT_API_ALLOWANCE);
  });
});
