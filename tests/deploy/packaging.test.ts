/**
 * The serverless CLI builds what it deploys: `npx serverless package` (osls) bundles every function fresh through
 * deploy/bundlePlugin.cjs, so a fresh clone packages and a deploy never ships bundles older than the code.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { withPackageLock } from '../../testkit/packagedTemplate.ts';

const bundles = join(process.cwd(), '.esbuild');

/** The API functions that carry the JSON-protocol AWS clients (docs/deploying.md quotes their zips' sizes). */
const API_FUNCTIONS_CALLING_AWS = ['salesRegistration', 'crmCase', 'recordStatus', 'eventFeed'];

/** The range docs/deploying.md quotes: "are <least>-<most> KiB". */
const quotedZipKib = (guide: string): [number, number] => {
  const match = /are (\d+)-(\d+) KiB/.exec(guide.replace(/\s+/g, ' '));
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
};

describe('npx serverless package', () => {
  it('bundles every function fresh, even with no bundle there, and writes the template', async () => {
    const out = await mkdtemp(join(tmpdir(), 'dealer-gateway-sls-package-'));
    try {
      await withPackageLock(async () => {
        // Prepare: no bundles at all, as in a fresh clone.
        await rm(bundles, { recursive: true, force: true });
        const started = Date.now();
        // Act: the serverless CLI itself, as `npx serverless` runs it (osls), not the npm script.
        const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_')));
        await promisify(execFile)(
          join(process.cwd(), 'node_modules', '.bin', 'serverless'),
          ['package', '--stage', 'ci', '--package', out],
          {
            env: { ...env, PATH: `${join(process.cwd(), 'node_modules', '.bin')}:${process.env.PATH}` },
            maxBuffer: 16 * 1024 * 1024,
          },
        );
        // Assess: every function's zip is new and built from its handler's source; the template is there.
        const template = JSON.parse(
          await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8'),
        ) as { Resources: Record<string, { Type: string }> };
        const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
        expect(functions.length).toBeGreaterThanOrEqual(7);
        for (const name of ['salesRegistration', 'crmCase', 'recordStatus', 'reconciler', 'erpDelivery']) {
          const zip = join(bundles, `${name}.zip`);
          expect((await stat(zip)).mtimeMs).toBeGreaterThanOrEqual(started - 1000);
          const files = unzipSync(await readFile(zip));
          const maps = Object.keys(files).filter((file) => file.endsWith('.map'));
          const sources = maps.flatMap(
            (file) => JSON.parse(new TextDecoder().decode(files[file])).sources as string[],
          );
          const handler = name.endsWith('Delivery') ? 'deliveryWorker' : name;
          expect(sources.some((source) => source.endsWith(`functions/${handler}.ts`))).toBe(true);
        }
        // Assess: docs/deploying.md quotes the API functions' zips as they are (within 15 %, so a small change of
        // the code does not fail here, a figure that has gone stale does).
        const kib = await Promise.all(
          API_FUNCTIONS_CALLING_AWS.map(
            async (name) => (await stat(join(bundles, `${name}.zip`))).size / 1024,
          ),
        );
        const [least, most] = quotedZipKib(await readFile(join(process.cwd(), 'docs/deploying.md'), 'utf8'));
        expect(Math.abs(least - Math.min(...kib)) / Math.min(...kib)).toBeLessThan(0.15);
        expect(Math.abs(most - Math.max(...kib)) / Math.max(...kib)).toBeLessThan(0.15);
      });
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 120_000);
});
