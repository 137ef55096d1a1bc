/**
 * openapi.json as an integrator uses it: types generated with openapi-typescript, the README's calls written with
 * openapi-fetch on them, type-checked. The documented answers are typed as their calls' answers, the README's
 * refused request must not compile, DealerId is typed a number, and the webhook body of docs/API.md is the
 * generated webhook type. Planted controls: a document whose DealerId branches carry no type, and one whose
 * webhook schema nests a `$defs`, each fails the check.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../tools/openapi/buildOpenApiDocument.ts';
import { openapiFetchFolder, typesOf } from '../../tools/openapi-types/generateTypes.ts';
import { codeBlocks, sectionOf } from '../docs/docExamples.ts';
import { curlExamples, integratorCalls } from './integratorCalls.ts';

const root = new URL('../../', import.meta.url);
const committed = JSON.parse(readFileSync(new URL('openapi.json', root), 'utf8')) as JsonObject;
const readme = readFileSync(new URL('README.md', root), 'utf8');
const apiGuide = readFileSync(new URL('docs/API.md', root), 'utf8');

/** The project's own compiler (TypeScript 7): what the integrator's project type-checks with is not the point. */
const tsc = join(dirname(createRequire(root).resolve('typescript/package.json')), 'bin', 'tsc');

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** What holds whatever the README shows: the types keep DealerId a number and type the documented webhook body. */
const guarantees = (webhookBody: string): string =>
  [
    "import type { components, webhooks } from './api.ts';",
    '',
    '// @ts-expect-error DealerId is a number: a generator that loses its type would take a string',
    "export const dealerIdAsText: components['schemas']['SalesRegistrationRecord']['DealerId'] = '1234';",
    "type WebhookBody = NonNullable<webhooks['recordStateChanged']['post']['requestBody']>['content']['application/json'];",
    `export const webhookBody: WebhookBody = ${webhookBody};`,
    '',
  ].join('\n');

/**
 * Generates the types of `document` into a folder of its own with the README's calls and the guarantees, and
 * type-checks it.
 */
const typeCheck = async (document: JsonObject): Promise<{ ok: boolean; output: string; calls: string }> => {
  const folder = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  folders.push(folder);
  const calls = integratorCalls(curlExamples(readme), Object.keys(document.paths as JsonObject));
  const [webhookBody] = codeBlocks(sectionOf(apiGuide, 'Record status'), 'json');
  writeFileSync(join(folder, 'api.ts'), await typesOf(document));
  writeFileSync(join(folder, 'calls.ts'), calls);
  writeFileSync(join(folder, 'guarantees.ts'), guarantees(webhookBody));
  writeFileSync(
    join(folder, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2024',
        lib: ['es2024', 'dom'],
        module: 'preserve',
        moduleResolution: 'bundler',
        strict: true,
        noEmit: true,
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: [],
        paths: { 'openapi-fetch': [openapiFetchFolder()] },
      },
      files: ['calls.ts', 'guarantees.ts'],
    }),
  );
  try {
    await promisify(execFile)(tsc, ['-p', join(folder, 'tsconfig.json')]);
    return { ok: true, output: '', calls };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout}${stderr}`, calls };
  }
};

/** The document with a schema at `path` (under components/schemas) changed by `change`. */
const planted = (path: string[], change: (schema: JsonObject) => void): JsonObject => {
  const document = structuredClone(committed);
  change(path.reduce((node, key) => node[key] as JsonObject, document.components as JsonObject));
  return document;
};

describe('openapi.json through openapi-typescript and openapi-fetch', () => {
  it('type-checks every call of the README and the answers it shows', async () => {
    // Act
    const { ok, output, calls } = await typeCheck(committed);
    // Assess
    expect(output).toBe('');
    expect(ok).toBe(true);
    // Every curl of the README became a call, the refused one among them.
    expect(calls.match(/await client\./g)).toHaveLength(curlExamples(readme).length);
    expect(curlExamples(readme).length).toBeGreaterThanOrEqual(6);
    expect(calls).toContain('@ts-expect-error');
  });

  it('fails when DealerId’s branches carry no type (planted)', async () => {
    // Prepare
    const document = planted(['schemas', 'SalesRegistrationRecord', 'properties', 'DealerId'], (dealerId) => {
      dealerId.anyOf = [
        { minimum: 1000, maximum: 9999 },
        { minimum: 100000, maximum: 999999 },
      ];
    });
    // Act
    const { ok, output } = await typeCheck(document);
    // Assess
    expect(ok).toBe(false);
    expect(output).toMatch(/guarantees\.ts.*Unused '@ts-expect-error' directive/);
  });

  it('fails when the webhook body’s schema nests a $defs (planted)', async () => {
    // Prepare
    const document = structuredClone(committed);
    const webhook = (document.webhooks as JsonObject).recordStateChanged as JsonObject;
    const body = (((webhook.post as JsonObject).requestBody as JsonObject).content as JsonObject)[
      'application/json'
    ] as JsonObject;
    const schema = body.schema as JsonObject;
    // What the document had: the bus event's envelope nested in the webhook body's schema.
    schema.$defs = { envelope: { type: 'object', properties: { source: { type: 'string' } } } };
    // Act
    const { ok, output } = await typeCheck(document);
    // Assess
    expect(ok).toBe(false);
    expect(output).toMatch(/guarantees\.ts.*\$defs/);
  });
});
