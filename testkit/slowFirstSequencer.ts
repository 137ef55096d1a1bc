import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { SLOW_TESTS, SLOWEST_FIRST } from './slowTests.ts';

/** A glob of testkit/slowTests.ts as a test of a project-relative path (`**` any path, `*` within a folder). */
const matcher = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*/g, '.*')
      .replace(/(?<!\.)\*/g, '[^/]*')}$`,
  );

const slow = SLOW_TESTS.map(matcher);

/**
 * Orders the test files: the slowest first (SLOWEST_FIRST in its order), then the other slow ones, then the rest as
 * vitest would. With two workers the long files then run beside the short ones instead of after them.
 *
 * @example
 * // vitest.config.ts
 * sequence: { sequencer: SlowFirstSequencer }
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (file: TestSpecification) => relative(process.cwd(), file.moduleId).split('\\').join('/');
    const rank = (file: TestSpecification) => {
      const first = SLOWEST_FIRST.indexOf(path(file));
      if (first >= 0) return first;
      return slow.some((glob) => glob.test(path(file))) ? SLOWEST_FIRST.length : SLOWEST_FIRST.length + 1;
    };
    // A stable sort: within a rank, vitest's own order.
    return sorted
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}
