/**
 * Writes the OpenAPI document of the public operations, built from `schemas/`, to `openapi.json` at the project
 * root. The file is committed so integrators can read it where the code lives; `tests/openapi` fails when it
 * drifts from what `tools/openapi/buildOpenApiDocument.ts` builds. Run after changing a schema or an answer:
 *
 *   node scripts/build-openapi.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument } from '../tools/openapi/buildOpenApiDocument.ts';

const root = new URL('..', import.meta.url).pathname;
const target = join(root, 'openapi.json');

writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);

console.log('openapi: schemas/ -> openapi.json');
