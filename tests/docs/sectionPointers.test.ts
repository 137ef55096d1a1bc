/**
 * A pointer written in words ("see the README's "Clients and keys"", "docs/API.md, 'Test mode'") is a link that
 * tests/docs/links.test.ts cannot follow: the section it names must exist in the guide it names, so a section that
 * moves to another guide fails here instead of sending a reader to the wrong page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';

/** Where pointers are written: the guides, the configuration, and the code's comments. */
const SCANNED = [
  'README.md',
  'docs',
  'config',
  'deploy',
  'lib',
  'functions',
  'local',
  'tools',
  'scripts',
  'sandbox',
];

const filesUnder = (path: string): string[] =>
  statSync(join(projectRoot, path)).isDirectory()
    ? readdirSync(join(projectRoot, path)).flatMap((name) =>
        name === 'generated' ? [] : filesUnder(`${path}/${name}`),
      )
    : /\.(md|ts|cjs|json)$/.test(path)
      ? [path]
      : [];

/**
 * `README's "Clients and keys"`, `README, 'Clients and keys'`, `README ("Clients and keys")`, `docs/API.md, "Test mode"`:
 * the guide and the section's title.
 */
const POINTER =
  /\b((?:[a-z]+\/)?(?:README|[A-Za-z]+\.md))(?:'s|,)? \(?(?:"([A-Z][^"\n]{2,60})"|'([A-Z][^'\n]{2,60})'|“([A-Z][^”\n]{2,60})”)/g;

/** The guide a pointer names: `README` is the project's README, a bare `X.md` the guide in docs/ of that name. */
const guideOf = (name: string): string | undefined => {
  const candidates = name === 'README' ? ['README.md'] : name.includes('/') ? [name] : [`docs/${name}`, name];
  return candidates.find((candidate) => existsSync(join(projectRoot, candidate)));
};

/** The titles of a markdown file's headings. */
const headingsOf = (file: string): Set<string> =>
  new Set(
    readFileSync(join(projectRoot, file), 'utf8')
      .replace(/^```[\s\S]*?^```/gm, '')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => line.replace(/^#+ /, '').trim()),
  );

/** The pointers of a text whose guide is missing or has no section of that title. */
const brokenPointers = (text: string): string[] =>
  [...text.matchAll(POINTER)]
    .filter(([, name, ...quoted]) => {
      const section = quoted.find((title) => title !== undefined) ?? '';
      const guide = guideOf(name);
      return guide === undefined || !headingsOf(guide).has(section);
    })
    .map(([whole]) => whole);

describe('pointers to a section written in words', () => {
  const files = SCANNED.flatMap(filesUnder);

  it('finds pointers to check (the pattern still matches how they are written)', () => {
    // Prepare / Act
    const found = files.flatMap((file) => [
      ...readFileSync(join(projectRoot, file), 'utf8').matchAll(POINTER),
    ]);
    // Assess
    expect(found.length).toBeGreaterThan(10);
  });

  it.each(files)('%s: every section it points to exists in that guide', (file) => {
    // Prepare
    const text = readFileSync(join(projectRoot, file), 'utf8');
    // Act / Assess
    expect(brokenPointers(text)).toEqual([]);
  });

  it('control: a pointer to a section another guide has is found broken', () => {
    // Prepare: "Clients and keys" is a section of docs/operations.md, not of the README
    const text = `see the README's "Clients and keys", docs/operations.md, "Clients and keys" and docs/design.md, "Webhooks: one client's slow receiver"`;
    // Act / Assess: a title is read whole, an apostrophe in it too
    expect(brokenPointers(text)).toEqual([
      `README's "Clients and keys"`,
      `docs/design.md, "Webhooks: one client's slow receiver"`,
    ]);
  });
});
