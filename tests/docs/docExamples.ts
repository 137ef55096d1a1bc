/**
 * The curl examples of a guide's section as a harness runs them: each command (from `curl` to the `# <answer>` line
 * under it) with the answer the guide shows, and the comparison of a documented answer with a real one. Values that
 * differ from run to run compare by their shape: a record id (32 hex), a time (ISO 8601), an event id
 * (`<id>:<time>`), an SAP-style document number (`49` and 6 digits), a Salesforce-style id (`500` and 15), a feed
 * cursor.
 */

/** One documented command and the answer under it. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export interface DocExample {
  command: string;
  answer: unknown;
}

/**
 * The text of a `## <heading>` section of a markdown guide, up to the next `## `.
 *
 * @example
 * sectionOf(readFileSync('docs/API.md', 'utf8'), 'Test mode')
 */
export const sectionOf = (markdown: string, heading: string): string => {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
};

/**
 * The code blocks of a language in a markdown text.
 *
 * @example
 * codeBlocks(section, 'json') // ['{"id": …}']
 */
export const codeBlocks = (markdown: string, language: string): string[] =>
  [...markdown.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map(
    (match) => match[1],
  );

/**
 * The commands of `sh` blocks, each with the JSON answer on the `# ` line under it.
 *
 * @example
 * shExamples('```sh\ncurl -s localhost:3000/x\n# {"a":1}\n```\n') // [{ command: 'curl -s localhost:3000/x', answer: { a: 1 } }]
 */
export const shExamples = (markdown: string): DocExample[] => {
  const examples: DocExample[] = [];
  for (const block of codeBlocks(markdown, 'sh')) {
    let command: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('curl ')) command = [line];
      else if (line.startsWith('# ') && command.length > 0) {
        examples.push({ command: command.join('\n'), answer: JSON.parse(line.slice(2)) });
        command = [];
      } else if (command.length > 0 && line !== '') command.push(line);
    }
  }
  return examples;
};

const RECORD_ID = /^[0-9a-f]{32}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const EVENT_ID = /^[0-9a-f]{32}:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SAP_NUMBER = /^49\d{6}$/;
const SALESFORCE_ID = /^500[0-9A-Za-z]{15}$/;

/** Whether a string is a feed cursor: base64url of `{"c": <client>, "k": <feed key>}` (lib/feed/feedCursor.ts). */
const isCursor = (value: string): boolean => {
  if (!/^eyJ[A-Za-z0-9_-]+$/.test(value)) return false;
  try {
    const { c, k } = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as {
      c?: unknown;
      k?: unknown;
    };
    return typeof c === 'string' && typeof k === 'string';
  } catch {
    return false;
  }
};

/**
 * A JSON value with what differs from run to run replaced by its shape.
 *
 * @example
 * shapeOf({ id: '36e63e27d7a96a581be6f440d5792c8f', downstreamId: '49216726' }) // { id: '<record id>', downstreamId: '<SAP number>' }
 */
export const shapeOf = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shapeOf(inner)]));
  if (typeof value !== 'string') return value;
  if (RECORD_ID.test(value)) return '<record id>';
  if (TIME.test(value)) return '<time>';
  if (EVENT_ID.test(value)) return '<event id>';
  if (SAP_NUMBER.test(value)) return '<SAP number>';
  if (SALESFORCE_ID.test(value)) return '<Salesforce id>';
  if (isCursor(value)) return '<cursor>';
  return value;
};

/**
 * Pairs the record ids a documented answer shows with those the real answer gave at the same places, so that the
 * next commands ask for the real ones.
 *
 * @example
 * idsIn({ id: 'aaa…' }, { id: 'bbb…' }, map) // map.get('aaa…') === 'bbb…'
 */
export const idsIn = (documented: unknown, real: unknown, into: Map<string, string>): void => {
  if (typeof documented === 'string' && typeof real === 'string') {
    if (RECORD_ID.test(documented)) into.set(documented, real);
    return;
  }
  if (documented && real && typeof documented === 'object' && typeof real === 'object')
    for (const [key, inner] of Object.entries(documented))
      idsIn(inner, (real as Record<string, unknown>)[key], into);
};

/**
 * A command with the documented ids replaced by the real ones.
 *
 * @example
 * withRealIds('curl …/5d7c…', new Map([['5d7c…', '36e6…']])) // 'curl …/36e6…'
 */
export const withRealIds = (command: string, ids: ReadonlyMap<string, string>): string =>
  command.replace(/[0-9a-f]{32}/g, (id) => ids.get(id) ?? id);

const run = promisify(execFile);

/**
 * Runs a guide's example (its curl against `host`, the ids answered earlier put in) until its answer has the shape
 * the guide shows, or `timeoutMs` has passed (a record settles after a while); records the ids the answer names.
 *
 * @returns the last answer, and a line saying how it differed when it never matched.
 * @example
 * const { real, mismatch } = await answerAsDocumented(example, { env, ids, host, timeoutMs: 60_000 });
 */
export const answerAsDocumented = async (
  example: DocExample,
  options: { env: NodeJS.ProcessEnv; ids: Map<string, string>; host: string; timeoutMs: number },
): Promise<{ real: unknown; mismatch?: string }> => {
  const command = withRealIds(example.command, options.ids).replaceAll('localhost:3000', options.host);
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const real: unknown = JSON.parse((await run('sh', ['-c', command], { env: options.env })).stdout);
    const matched = JSON.stringify(shapeOf(real)) === JSON.stringify(shapeOf(example.answer));
    if (matched || Date.now() > deadline) {
      idsIn(example.answer, real, options.ids);
      if (matched) return { real };
      const documented = `documented ${JSON.stringify(example.answer)}`;
      return {
        real,
        mismatch: `${example.command.split('\n')[0]}\n  ${documented}\n  answered   ${JSON.stringify(real)}`,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
};
