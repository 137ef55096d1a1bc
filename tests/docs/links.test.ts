/**
 * The guides stay true to the tree: every relative link in the README and the guides (docs/, bench/, tests/,
 * deploy/) resolves inside the clone, to a file and, with `#anchor`, to a heading of it; and every project path the
 * guides name in backticks (`lib/store/`, `local/delivery.ts`) exists, so a move that leaves a guide behind fails here.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';

const GUIDES = [
  'README.md',
  ...['docs', 'bench', 'tests', 'deploy'].flatMap((dir) =>
    readdirSync(join(projectRoot, dir))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `${dir}/${name}`),
  ),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const withoutCode = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

const anchorsOf = (file: string) =>
  new Set(
    withoutCode(readFileSync(join(projectRoot, file), 'utf8'))
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => anchorOf(line.replace(/^#+ /, ''))),
  );

/** The broken relative links of a markdown text found at `file` (links to the web are not followed). */
const brokenLinks = (file: string, text: string): string[] =>
  [...withoutCode(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z]+:/i.test(target))
    .filter((target) => {
      const [path, anchor] = target.split('#');
      const resolved = path ? relative(projectRoot, normalize(join(projectRoot, dirname(file), path))) : file;
      if (resolved.startsWith('..') || !existsSync(join(projectRoot, resolved))) return true;
      return anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor);
    });

const PROJECT_PATH =
  /`((?:lib|functions|local|soak|testkit|tools|scripts|bench|tests|sandbox|deploy|schemas|config|docs)\/[\w./-]*)`/g;

/** The project paths named in backticks that do not exist. */
const missingPaths = (text: string): string[] =>
  [...text.matchAll(PROJECT_PATH)]
    .map((match) => match[1])
    .filter((path) => !path.includes('*') && !existsSync(join(projectRoot, path)));

describe('the guides', () => {
  it.each(GUIDES)('%s: every relative link resolves inside the clone', (file) => {
    expect(brokenLinks(file, readFileSync(join(projectRoot, file), 'utf8'))).toEqual([]);
  });

  it.each(GUIDES)('%s: every project path it names exists', (file) => {
    expect(missingPaths(readFileSync(join(projectRoot, file), 'utf8'))).toEqual([]);
  });

  it('finds a planted broken link, a planted missing anchor and a planted missing path', () => {
    // Prepare
    const planted =
      'See [the design](docs/design.md), [gone](docs/gone.md), [no such heading](docs/design.md#no-such-heading) and `lib/gone/module.ts`, `lib/store/`.';
    // Act
    const links = brokenLinks('README.md', planted);
    const paths = missingPaths(planted);
    // Assess
    expect(links).toEqual(['docs/gone.md', 'docs/design.md#no-such-heading']);
    expect(paths).toEqual(['lib/gone/module.ts']);
  });
});
