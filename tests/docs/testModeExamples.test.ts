/**
 * docs/API.md, "Test mode": every curl example there is run against `npm start` with the test client's key, and
 * answers as written (values that differ from run to run by their shape: tests/docs/docExamples.ts); a look-up is
 * asked again until it shows the documented state (the record is `accepted` until then). The feed entry shown is
 * among the test client's feed entries. The harness itself finds a planted wrong answer.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryDelaySeconds } from '../../lib/delivery/retryDelay.ts';
import { deliverySettings } from '../../lib/settings/settings.ts';
import { projectRoot } from '../../local/project.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';
import { answerAsDocumented, codeBlocks, sectionOf, shapeOf, shExamples } from './docExamples.ts';

const section = sectionOf(readFileSync(join(projectRoot, 'docs/API.md'), 'utf8'), 'Test mode');

describe('docs/API.md, "Test mode": the harness', () => {
  it('reads each command with its answer, and tells a documented answer from a wrong one (planted)', () => {
    // Prepare
    const examples = shExamples(section);
    const [lookUp] = examples.filter((example) => /"status":"rejected"/.test(JSON.stringify(example.answer)));
    // Act
    const planted = { ...(lookUp.answer as Record<string, unknown>), attempts: 2 };
    const sameShape = {
      ...(lookUp.answer as Record<string, unknown>),
      id: '0123456789abcdef0123456789abcdef',
    };
    // Assess
    expect(examples.length).toBeGreaterThanOrEqual(6);
    expect(examples.every((example) => example.command.includes('$TEST_KEY'))).toBe(true);
    expect(shapeOf(planted)).not.toEqual(shapeOf(lookUp.answer));
    expect(shapeOf(sameShape)).toEqual(shapeOf(lookUp.answer));
  });
});

/** A final look-up's seconds from accepted to its last change, and the least and most the default backoff allows. */
const timingOf = (answer: Record<string, unknown>) => {
  const { retryBaseSeconds } = deliverySettings({});
  const waits = Array.from({ length: Number(answer.attempts) - 1 }, (_, index) => index + 1);
  return {
    seconds: (Date.parse(String(answer.updatedAt)) - Date.parse(String(answer.acceptedAt))) / 1000,
    least: waits.reduce((sum, attempt) => sum + retryDelaySeconds(attempt, retryBaseSeconds, () => 0), 0),
    // Jitter at its most, and a few seconds for the calls themselves.
    most: waits.reduce((sum, attempt) => sum + retryDelaySeconds(attempt, retryBaseSeconds, () => 1), 0) + 10,
  };
};

/** The documented look-ups of a final state after several attempts whose times the default backoff cannot give. */
const impossibleTimings = (answers: readonly unknown[]) =>
  answers
    .filter((answer): answer is Record<string, unknown> => typeof answer === 'object' && answer !== null)
    .filter((answer) => ['delivered', 'rejected', 'failed'].includes(String(answer.status)))
    .map((answer) => ({ id: answer.id, attempts: answer.attempts, ...timingOf(answer) }))
    .filter(({ seconds, least, most }) => seconds < least || seconds > most);

describe('docs/API.md, "Test mode": the times its answers show', () => {
  it('fit the default backoff: a record decided after n attempts waited for n - 1 retries', () => {
    // Prepare
    const answers = shExamples(section).flatMap((example) => {
      const { answer } = example as { answer: unknown };
      const records = (answer as { records?: unknown[] } | undefined)?.records;
      return records ?? [answer];
    });
    // Act / Assess
    expect(answers.filter((answer) => Number((answer as { attempts?: number })?.attempts) > 1).length).toBe(
      2,
    );
    expect(impossibleTimings(answers)).toEqual([]);
  });

  it('control: a FAIL record failed 2 min 36 s after it was accepted is found', () => {
    // Prepare: 5 attempts need 30 + 60 + 120 + 240 s of waits at least
    const planted = {
      id: 'e4d3c2b1a0f9e8d7c6b5a49382716050',
      status: 'failed',
      attempts: 5,
      acceptedAt: '2026-11-28T08:10:05.020Z',
      updatedAt: '2026-11-28T08:12:41.377Z',
    };
    // Act / Assess
    expect(impossibleTimings([planted])).toMatchObject([{ seconds: 156.357, least: 450 }]);
  });
});

describe('docs/API.md, "Test mode", against npm start', () => {
  let service: RunningService;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'dealer-gateway-docs-'));
    // A 1 s backoff base: FAIL spends its 5 attempts in seconds rather than minutes.
    service = await npmStart({ DATA_DIR: dataDir, DELIVERY_RETRY_BASE_SECONDS: '1' });
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers every example as written, and lists the feed entry shown', async () => {
    // Prepare
    const ids = new Map<string, string>();
    const env = { ...process.env, TEST_KEY: service.keys['example-dealer-test'] };
    const host = new URL(service.url).host;
    const mismatches: string[] = [];
    // Act
    for (const example of shExamples(section)) {
      const { mismatch } = await answerAsDocumented(example, { env, ids, host, timeoutMs: 90_000 });
      if (mismatch) mismatches.push(mismatch);
    }
    const [entry] = codeBlocks(section, 'json').map((text) => JSON.parse(text));
    const feed = (await (
      await fetch(`${service.url}/events?limit=100`, {
        headers: { 'x-api-key': service.keys['example-dealer-test'] },
      })
    ).json()) as { events: unknown[] };
    // Assess
    expect(mismatches).toEqual([]);
    expect(feed.events.map((event) => JSON.stringify(shapeOf(event)))).toContain(
      JSON.stringify(shapeOf(entry)),
    );
  }, 240_000);
});
