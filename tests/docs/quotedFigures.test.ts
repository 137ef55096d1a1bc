/**
 * Figures live in one place, bench/RESULTS.md, written by the bench. A guide that quotes one makes the figure the
 * text of a link to its section (`[2.2 s](bench/RESULTS.md#fair-share-between-clients)`); every number of that
 * text must appear in that section, so a figure the bench has since rewritten fails here instead of going stale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';

const RESULTS = 'bench/RESULTS.md';

const GUIDES = [
  'README.md',
  ...['docs', 'bench', 'tests', 'deploy'].flatMap((dir) =>
    readdirSync(join(projectRoot, dir))
      .filter((name) => name.endsWith('.md') && `${dir}/${name}` !== RESULTS)
      .map((name) => `${dir}/${name}`),
  ),
];

/** GitHub's anchor of a heading, as tests/docs/links.test.ts computes it. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Each section of a markdown text by its anchor: from its heading to the next heading of any level. */
const sectionsOf = (markdown: string): Map<string, string> => {
  const sections = new Map<string, string>();
  let anchor: string | undefined;
  let lines: string[] = [];
  const close = () => {
    if (anchor !== undefined) sections.set(anchor, lines.join('\n'));
  };
  for (const line of markdown.split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading) {
      close();
      anchor = anchorOf(heading[1]);
      lines = [];
    } else lines.push(line);
  }
  close();
  return sections;
};

/** The numbers of a text as written (`10,000`, `0.41`, `183.4`); a number is not part of a longer one. */
const numbersOf = (text: string): string[] =>
  [...text.matchAll(/(?<![\d.,])\d+(?:,\d{3})*(?:\.\d+)?(?![\d])/g)].map((m) => m[0]);

/** A quoted figure: the text of a link to a section of RESULTS.md, when that text holds a number. */
interface Quote {
  figure: string;
  anchor: string;
}

/** The figures a guide's text quotes from RESULTS.md. */
const quotesOf = (text: string): Quote[] =>
  [...text.matchAll(/\[([^\]]*\d[^\]]*)\]\((?:\.\.\/)*(?:bench\/)?RESULTS\.md(?:#([^)\s]*))?\)/g)].map(
    (m) => ({
      figure: m[1],
      anchor: m[2] ?? '',
    }),
  );

/** The quotes whose section is missing, or lacks one of the quote's numbers, each as `figure (#anchor)`. */
const differingQuotes = (text: string, results: string): string[] => {
  const sections = sectionsOf(results);
  return quotesOf(text)
    .filter(({ figure, anchor }) => {
      const section = sections.get(anchor);
      if (section === undefined) return true;
      const found = new Set(numbersOf(section));
      return numbersOf(figure).some((number) => !found.has(number));
    })
    .map(({ figure, anchor }) => `${figure} (#${anchor})`);
};

const results = readFileSync(join(projectRoot, RESULTS), 'utf8');

describe('figures quoted from bench/RESULTS.md', () => {
  it.each(GUIDES)('%s: every quoted figure is the one its section of RESULTS.md gives', (file) => {
    // Prepare
    const text = readFileSync(join(projectRoot, file), 'utf8');
    // Act
    const differing = differingQuotes(text, results);
    // Assess
    expect(differing).toEqual([]);
  });

  it('the guides quote figures this way (bench/README.md does)', () => {
    // Assess
    expect(quotesOf(readFileSync(join(projectRoot, 'bench/README.md'), 'utf8')).length).toBeGreaterThan(10);
  });

  it('finds a planted stale figure, a figure without a section and one of an unknown section', () => {
    // Prepare
    const planted = [
      'p99 [2.2 s](RESULTS.md#fair-share-between-clients), then [1.6 / 5.1 s](RESULTS.md#fair-share-between-clients),',
      '[142.9 records/s](../bench/RESULTS.md#fair-share-between-clients), [0.41x](bench/RESULTS.md) and',
      '[3 s](RESULTS.md#no-such-section); [the figures](RESULTS.md#fair-share-between-clients) quote nothing.',
    ].join('\n');
    // Act
    const differing = differingQuotes(planted, results);
    // Assess
    expect(differing).toEqual([
      '1.6 / 5.1 s (#fair-share-between-clients)',
      '142.9 records/s (#fair-share-between-clients)',
      '0.41x (#)',
      '3 s (#no-such-section)',
    ]);
  });
});
