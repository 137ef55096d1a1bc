/** serverless.yml as the serverless CLI resolves it for the local stage (`osls print`): the one source of truth. */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { localStage, oslsScript, projectRoot } from './project.ts';

const cacheFile = join(projectRoot, 'node_modules', '.cache', 'local-stack', 'osls-print.json');

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export interface ResolvedServerlessConfig {
  service: string;
  provider: { region?: string; environment?: Record<string, unknown> };
  resources?: { Resources?: Record<string, CfnResource> };
  functions?: Record<string, { handler?: string; events?: unknown[]; environment?: Record<string, unknown> }>;
}

/**
 * Runs `osls print --stage local --format json` in the project root. `env` is the environment the CLI
 * resolves `${env:...}` against: pass the same one offline gets, minus the values that come from this.
 */
export async function printServerlessConfig(
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<ResolvedServerlessConfig> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [oslsScript, 'print', '--stage', localStage, '--format', 'json'],
      { cwd: projectRoot, env, maxBuffer: 32 * 1024 * 1024, signal },
    );
    // Anything a plugin might log before the JSON is not part of it.
    return JSON.parse(stdout.slice(stdout.indexOf('{'))) as ResolvedServerlessConfig;
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    const output = `${stderr ?? ''}${stdout ?? ''}`.trim();
    throw new Error(`osls print failed: ${output || (error as Error).message}`, { cause: error });
  }
}

/**
 * The last `osls print` result, if serverless.yml has not changed since. Only a guess to start offline
 * early: `osls print` still runs every time, and the caller must check the guess against it.
 */
export async function readCachedServerlessConfig(): Promise<ResolvedServerlessConfig | undefined> {
  try {
    const [cached, source] = await Promise.all([readFile(cacheFile, 'utf8'), serverlessYmlHash()]);
    const { hash, config } = JSON.parse(cached) as { hash: string; config: ResolvedServerlessConfig };
    return hash === source ? config : undefined;
  } catch {
    return undefined;
  }
}

/**
 * serverless.yml as resolved for the local stage: the last `osls print` while serverless.yml is unchanged, else a
 * fresh one (about 1.3 s). For tools that read the deployed settings (the fault campaign, the bench, tests).
 *
 * @example
 * const config = await resolvedServerlessConfig();
 */
export async function resolvedServerlessConfig(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedServerlessConfig> {
  return (await readCachedServerlessConfig()) ?? (await printServerlessConfig(env));
}

export async function writeCachedServerlessConfig(config: ResolvedServerlessConfig): Promise<void> {
  try {
    const hash = await serverlessYmlHash();
    await mkdir(join(cacheFile, '..'), { recursive: true });
    const temporary = `${cacheFile}.${process.pid}`;
    await writeFile(temporary, JSON.stringify({ hash, config }));
    await rename(temporary, cacheFile);
  } catch {
    // Only a cache.
  }
}

async function serverlessYmlHash(): Promise<string> {
  return createHash('sha256')
    .update(await readFile(join(projectRoot, 'serverless.yml')))
    .digest('hex');
}

/**
 * The webhook dispatcher's WEBHOOK_SECRETS_PREFIX as serverless.yml sets it (any function's that has one), if any:
 * the local Secrets Manager serves each client's secret under it, and runner.json names it for the operators' tools.
 *
 * @example
 * webhookSecretsPrefixOf(config) // 'dealer-gateway/local/webhooks/'
 */
export const webhookSecretsPrefixOf = (config: ResolvedServerlessConfig): string | undefined =>
  Object.values(config.functions ?? {})
    .map((fn) => fn.environment?.WEBHOOK_SECRETS_PREFIX)
    .find((prefix): prefix is string => typeof prefix === 'string');
