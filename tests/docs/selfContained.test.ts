/**
 * The project stands alone: whoever clones it has everything it refers to. No file of the repository (code, docs,
 * tests) cites a document of another repository (a contract kept beside this one, `shared/…`) or an issue number of
 * a tracker that is not in the repository; the behaviour it promises is stated in docs/behaviour.md and cited
 * from there. Public standards and vendors' documentation are linked by their addresses, which this allows.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../local/project.ts';

/** What a reference outside the repository looks like, by kind. */
const OUTSIDE: Record<string, RegExp> = {
  'the contract of another repository': /\bCONTRACT(?:\.md)?\b/,
  'a folder beside the repository': /(?:^|[^\w/.-])(?:\.\.\/)*shared\/|\/work\/shared\b|steering repository/,
  'an issue of a tracker not in the repository': /\bissues? #?\d+/i,
};

/** This file names what it looks for; every other file is read. */
const SELF = 'tests/docs/selfContained.test.ts';

/** The repository's files: tracked, and new ones not ignored (so a file not yet committed is judged too). */
const repositoryFiles = (): string[] =>
  execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: projectRoot })
    .toString('utf8')
    .split('\0')
    .filter((path) => path !== '' && path !== SELF);

/** Each line of a text that refers outside the repository, as `<path>:<line>: <kind>`. */
const outsideReferences = (path: string, text: string): string[] =>
  text.split('\n').flatMap((line, index) =>
    Object.entries(OUTSIDE)
      .filter(([, pattern]) => pattern.test(line))
      .map(([kind]) => `${path}:${index + 1}: ${kind}`),
  );

const textOf = (path: string): string | undefined => {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(projectRoot, path));
  } catch {
    return undefined; // deleted in the working tree, not yet in the index
  }
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
};

describe('the project stands alone', () => {
  it('no file of the repository refers to a document or an issue outside it', () => {
    // Prepare
    const files = repositoryFiles();
    // Act
    const found = files.flatMap((path) => {
      const text = textOf(path);
      return text === undefined ? [] : outsideReferences(path, text);
    });
    // Assess
    expect(files.length).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });

  it("finds planted references and lets the project's own citations and vendors' addresses be", () => {
    // Prepare: the outside references spelt in pieces, so that this file's own text holds none
    const contract = ['CON', 'TRACT'].join('');
    const planted = [
      `// the retry rule (${contract} section 3)`,
      `kept beside this one, as \`${['sha', 'red/'].join('')}${contract}.md\``,
      `## Fair share between clients (${['iss', 'ue'].join('')} 21)`,
      `fixed in ${['Iss', 'ues'].join('')} #18 and 19`,
      '// the retry rule (docs/behaviour.md#delivery-and-retries), the old contract shapes, contractErrors',
      '// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html',
      '// lib/shared/x.ts and src/shared/y, folders of the repository',
    ].join('\n');
    // Act
    const found = outsideReferences('planted.md', planted);
    // Assess
    expect(found).toEqual([
      'planted.md:1: the contract of another repository',
      'planted.md:2: the contract of another repository',
      'planted.md:2: a folder beside the repository',
      'planted.md:3: an issue of a tracker not in the repository',
      'planted.md:4: an issue of a tracker not in the repository',
    ]);
  });
});
