/**
 * The TypeScript types an integrator generates from openapi.json with openapi-typescript, and where the
 * integrator's client (openapi-fetch) is installed.
 *
 * openapi-typescript builds its output with the TypeScript 5 compiler API, which the project's TypeScript 7 does
 * not have: this folder is an npm workspace of its own, so that npm installs TypeScript 5 beside openapi-typescript
 * and the project keeps its own compiler.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';

/**
 * The `paths`, `components` and `webhooks` types of an OpenAPI document, as openapi-typescript writes them.
 *
 * @example
 * const source = await typesOf(JSON.parse(readFileSync('openapi.json', 'utf8')));
 * writeFileSync('api.ts', source);
 */
export const typesOf = async (document: object): Promise<string> =>
  // openapi-typescript takes a parsed document as its own OpenAPI3 type; ours is plain JSON of that shape.
  astToString(await openapiTS(document as Parameters<typeof openapiTS>[0]));

/**
 * The folder of the openapi-fetch package, for a type-check outside the repository's tree to find it.
 *
 * @example
 * const paths = { 'openapi-fetch': [openapiFetchFolder()] };
 */
export const openapiFetchFolder = (): string =>
  dirname(createRequire(import.meta.url).resolve('openapi-fetch/package.json'));
