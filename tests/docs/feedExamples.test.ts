/**
 * docs/API.md, "Catching up: the event feed": the two-page example shows only records the guide sends, and runs as
 * written against `npm start`, after the sale of "Operations" and its status look-up, as a reader goes through the
 * guide: each curl answers as documented (values that differ from run to run by their shape), and `NEXT` is the
 * `next` of the answer above it, as the reader sets it.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';
import { answerAsDocumented, type DocExample, sectionOf, shapeOf, shExamples } from './docExamples.ts';

const guide = readFileSync(join(projectRoot, 'docs/API.md'), 'utf8');
const FEED_HEADING = '\n### Catching up: the event feed\n';
const feedSection = guide.slice(
  guide.indexOf(FEED_HEADING),
  guide.indexOf('\n## ', guide.indexOf(FEED_HEADING)),
);

/** The sale of "Operations" and the look-up by id of "Record status": what a reader did before the feed. */
const before = (): DocExample[] => [
  ...shExamples(sectionOf(guide, 'Operations')).filter((e) => e.command.includes('/erp/sales_registration')),
  ...shExamples(sectionOf(guide, 'Record status')).filter((e) =>
    /sales_registration\/[0-9a-f]{32}/.test(e.command),
  ),
];

/** The frame numbers of the sales a list of examples registers. */
const framesSent = (examples: DocExample[]): string[] =>
  examples
    .flatMap((e) => (e.answer as { registrations?: { FrameNum: string }[] }).registrations ?? [])
    .map((r) => r.FrameNum);

/** The frame numbers of the feed entries a list of examples shows. */
const framesShown = (examples: DocExample[]): string[] =>
  examples
    .flatMap((e) => (e.answer as { events?: { data: { FrameNum?: string } }[] }).events ?? [])
    .flatMap((event) => (event.data.FrameNum ? [event.data.FrameNum] : []));

describe('docs/API.md, the event feed example', () => {
  it('shows only the records the guide sends, on pages of one', () => {
    // Prepare
    const feed = shExamples(feedSection);
    // Act
    const sent = framesSent([...before(), ...feed]);
    const shown = framesShown(feed);
    // Assess
    expect(shown.length).toBeGreaterThanOrEqual(2);
    for (const frame of shown) expect(sent, `${frame} is shown in the feed`).toContain(frame);
    expect(feedSection).toMatch(/^NEXT=/m);
  });

  it('tells a cursor by its shape, and a documented page from a wrong one (planted)', () => {
    const page = shExamples(feedSection).find((e) => /"next":"/.test(JSON.stringify(e.answer)));
    const answer = page?.answer as { events: unknown[]; next: string };
    const other = Buffer.from(JSON.stringify({ c: 'example-dealer', k: 'x' })).toString('base64url');
    expect(shapeOf({ ...answer, next: other })).toEqual(shapeOf(answer));
    expect(shapeOf({ ...answer, next: null })).not.toEqual(shapeOf(answer));
  });
});

describe('docs/API.md, the event feed example, against npm start', () => {
  let service: RunningService;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-feed-docs-'));
    service = await npmStart({ DATA_DIR: dataDir });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers every example as written, paging with the NEXT the first page gave', async () => {
    // Prepare
    const ids = new Map<string, string>();
    const env: Record<string, string | undefined> = {
      ...process.env,
      DEALER_KEY: service.keys['example-dealer'],
    };
    const host = new URL(service.url).host;
    const mismatches: string[] = [];
    // Act
    for (const example of [...before(), ...shExamples(feedSection)]) {
      const { real, mismatch } = await answerAsDocumented(example, { env, ids, host, timeoutMs: 60_000 });
      if (mismatch) mismatches.push(mismatch);
      // The reader's NEXT=: the next of the page just read.
      const next = (real as { next?: unknown }).next;
      if (typeof next === 'string') env.NEXT = next;
    }
    // Assess
    expect(mismatches).toEqual([]);
  }, 240_000);
});
