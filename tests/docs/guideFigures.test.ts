/**
 * Figures the guides quote from the code are the code's: the Salesforce sandbox's default allowance (a reader who
 * plays it from the operations guide's figure sees the figure `Sforce-Limit-Info` reports), and how long the feed
 * lets an entry settle (the API guide's feed example tells a reader to wait that long).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEED_SETTLE_MS } from '../../lib/feed/constants.ts';
import { projectRoot } from '../../local/project.ts';
import { createApiUsage, DEFAULT_API_ALLOWANCE } from '../../sandbox/apiUsage.ts';

/** The allowance the guide quotes as the sandbox's default: "an allowance (<n> a day by default". */
const quotedAllowance = (guide: string): number | undefined => {
  const match = /an allowance \(([\d,]+) a day by default/.exec(guide.replace(/\s+/g, ' '));
  return match ? Number(match[1].replaceAll(',', '')) : undefined;
};

const read = (guide: string) => readFileSync(join(projectRoot, guide), 'utf8').replace(/\s+/g, ' ');

/** The settling time a guide quotes: "served from about <n> s(econds) after its change". */
const quotedSettleSeconds = (text: string): number | undefined => {
  const match = /served from about (\d+) (?:s|seconds) after its change/.exec(text);
  return match ? Number(match[1]) : undefined;
};

describe('the feed as the guides describe it', () => {
  it.each(['docs/API.md', 'docs/behaviour.md'])(
    '%s quotes how long an entry settles as the feed does',
    (guide) => {
      expect(quotedSettleSeconds(read(guide))).toBe(FEED_SETTLE_MS / 1000);
    },
  );

  it('control: another figure is found', () => {
    expect(quotedSettleSeconds('served from about 2 s after its change')).not.toBe(FEED_SETTLE_MS / 1000);
  });
});

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
