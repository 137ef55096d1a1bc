/**
 * A guide's curl commands as an integrator writes them with a generated client: each becomes an openapi-fetch call
 * on the types openapi-typescript generates, with the answer the guide shows under it typed as that call's answer.
 * A call whose documented answer is a refusal of its content (`"success": false`) is expected not to compile: its
 * line carries `@ts-expect-error`, so the types must refuse what the service refuses.
 */

/** One curl command of a guide, with the answer shown under it (if any). */
export interface CurlExample {
  command: string;
  answer?: unknown;
}

/**
 * Every curl command of a markdown text's `sh` blocks, with the `# <json>` answer under it; consecutive commands
 * before one answer all get it (the guide shows one answer for alike look-ups).
 *
 * @example
 * curlExamples('```sh\ncurl -s localhost:3000/x\n# {"a":1}\n```\n') // [{ command: 'curl -s localhost:3000/x', answer: { a: 1 } }]
 */
export const curlExamples = (markdown: string): CurlExample[] => {
  const examples: CurlExample[] = [];
  for (const [, block] of markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    let waiting: CurlExample[] = [];
    let current: string[] | undefined;
    const close = () => {
      if (current) waiting.push({ command: current.join('\n') });
      current = undefined;
    };
    for (const line of block.split('\n')) {
      if (line.startsWith('curl ')) {
        close();
        current = [line];
      } else if (line.startsWith('# ') && (current || waiting.length > 0)) {
        close();
        let answer: unknown;
        try {
          answer = JSON.parse(line.slice(2));
        } catch {
          continue; // a comment, not an answer
        }
        for (const example of waiting) examples.push({ ...example, answer });
        waiting = [];
      } else if (current && line !== '' && !line.startsWith('#')) current.push(line);
      else close();
    }
    close();
    examples.push(...waiting);
  }
  return examples;
};

/**
 * The words of a shell command as the shell splits them: single and double quotes, backslash-newline.
 * `$NAME` inside double quotes or bare stays as written (the caller maps it to a variable).
 */
export const shellWords = (command: string): string[] => {
  const words: string[] = [];
  let word: string | undefined;
  const text = command.replace(/\\\n/g, ' ');
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (char === '"') {
      const end = text.indexOf('"', i + 1);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + char;
  }
  if (word !== undefined) words.push(word);
  return words;
};

/** A curl command as a request: method, path (on the guide's host), headers and body. */
export interface CurlRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: [name: string, value: string][];
  body?: unknown;
}

/**
 * The request a curl command sends.
 *
 * @example
 * curlRequest(`curl -s localhost:3000/crm/case -d '{"a":1}'`) // { method: 'POST', path: '/crm/case', headers: [], body: { a: 1 } }
 */
export const curlRequest = (command: string): CurlRequest => {
  const words = shellWords(command);
  if (words[0] !== 'curl') throw new Error(`not a curl command: ${command}`);
  const request: CurlRequest = { method: 'GET', path: '', headers: [] };
  const form: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const word = words[i];
    if (word === '-s') continue;
    if (word === '-H') {
      const [name, ...value] = words[++i].split(':');
      request.headers.push([name.trim(), value.join(':').trim()]);
    } else if (word === '-X') request.method = words[++i] as CurlRequest['method'];
    else if (word === '-d') {
      request.method = 'POST';
      request.body = JSON.parse(words[++i]);
    } else if (word === '--data-urlencode') {
      request.method = 'POST';
      const [name, ...value] = words[++i].split('=');
      form[name] = value.join('=');
      request.body = form;
    } else if (/^localhost:\d+\//.test(word)) request.path = word.replace(/^localhost:\d+/, '');
    else throw new Error(`a curl option this translation does not know: ${word} (in ${command})`);
  }
  return request;
};

/** The template of `paths` that a concrete path fills in, with its parameters: `<id>` fills `{id}`. */
const templateOf = (
  path: string,
  templates: readonly string[],
): { template: string; parameters: Record<string, string> } => {
  const segments = path.split('/');
  for (const template of templates) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    const parameters: Record<string, string> = {};
    const fits = parts.every((part, i) => {
      const name = /^\{(.+)\}$/.exec(part)?.[1];
      if (name) parameters[name] = segments[i];
      return name !== undefined || part === segments[i];
    });
    if (fits) return { template, parameters };
  }
  throw new Error(`no path of the document fits ${path}`);
};

/** A header value as a TypeScript expression: `$NAME` becomes the variable NAME. */
const valueExpression = (value: string): string =>
  /\$[A-Z_]/.test(value)
    ? `\`${value.replace(/`/g, '\\`').replace(/\$([A-Z_][A-Z0-9_]*)/g, (_, name: string) => `\${${name}}`)}\``
    : JSON.stringify(value);

/** The shell variables a guide's commands use: each is declared as a string. */
const variablesOf = (requests: readonly CurlRequest[]): string[] => [
  ...new Set(
    requests.flatMap(({ headers }) =>
      headers.flatMap(([, value]) => [...value.matchAll(/\$([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1])),
    ),
  ),
];

/**
 * A TypeScript module that makes each guide's call with openapi-fetch on the generated `paths` (imported from
 * `./api.ts`) and types each documented answer as that call's answer.
 *
 * @example
 * writeFileSync('calls.ts', integratorCalls(curlExamples(readme), Object.keys(openapi.paths)));
 */
export const integratorCalls = (examples: readonly CurlExample[], templates: readonly string[]): string => {
  const requests = examples.map(({ command }) => curlRequest(command));
  const lines = [
    "import createClient from 'openapi-fetch';",
    "import type { paths } from './api.ts';",
    '',
    ...variablesOf(requests).map((name) => `declare const ${name}: string;`),
    "const client = createClient<paths>({ baseUrl: 'http://localhost:3000' });",
    '',
    'export const calls = async (): Promise<void> => {',
  ];
  for (const [i, example] of examples.entries()) {
    const request = requests[i];
    const { template, parameters } = templateOf(request.path, templates);
    const options: string[] = [];
    const headers = request.headers
      .filter(([name]) => name.toLowerCase() !== 'content-type')
      .map(([name, value]) => `${JSON.stringify(name)}: ${valueExpression(value)}`);
    if (headers.length > 0) options.push(`headers: { ${headers.join(', ')} }`);
    if (Object.keys(parameters).length > 0) options.push(`params: { path: ${JSON.stringify(parameters)} }`);
    if (request.body !== undefined) options.push(`body: ${JSON.stringify(request.body)}`);
    const answer = example.answer as { success?: unknown } | undefined;
    const refused = answer?.success === false;
    lines.push(`  // ${example.command.split('\n')[0]}`);
    lines.push('  {');
    if (refused)
      lines.push('    // @ts-expect-error the guide shows this content refused: the types refuse it too');
    lines.push(
      `    const answered = await client.${request.method}(${JSON.stringify(template)}, { ${options.join(', ')} });`,
    );
    if (answer !== undefined)
      lines.push(
        `    const documented: NonNullable<typeof answered.${refused ? 'error' : 'data'}> = ${JSON.stringify(answer)};`,
        '    void documented;',
      );
    lines.push('  }');
  }
  lines.push('};', '');
  return lines.join('\n');
};
