/**
 * `npm run webhook-secret -- <rotate|enable|show> [<client>] [--stage <stage>] [--region <region>]`: a client's
 * webhook secret and its disabled flag, in npm start's data directory (no --stage) or on an AWS stage (Secrets
 * Manager `dealer-gateway/<stage>/webhooks/<client>`, the records table's `webhook#<client>` item); and
 * `resend --client <client> --record <id>`: a record's last event sent again with the same `webhook-id`. The flag and
 * the resend are the service's own code (lib/webhooks/disabledWebhooks.ts, lib/webhooks/resend.ts), as the console's.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { Client } from '../../lib/clients/types.ts';
import { resetSettings } from '../../lib/settings/environment.ts';
import { tableWebhookSwitch } from '../../lib/webhooks/disabledWebhooks.ts';
import { RESEND_REFUSALS, type RecordResendResult, resendLastEvent } from '../../lib/webhooks/resend.ts';
import {
  parseWebhookSecrets,
  rotateWebhookSecrets,
  rotationWindowMs,
  settledWebhookSecrets,
  storedWebhookSecrets,
  type WebhookSecrets,
} from '../../lib/webhooks/secrets.ts';
import { defaultDataDir } from '../../local/project.ts';
import { localWebhookRoutes, redirectWebhookCalls } from '../../local/webhookRoutes.ts';
import { ensureWebhookSecrets, rotateLocalWebhookSecret } from '../../local/webhookSecrets.ts';
import { parseCommandLine, UsageError } from '../cli/commandLine.ts';

export const USAGE = `usage: npm run webhook-secret -- rotate <client> [--stage <stage>] [--region <region>]
       npm run webhook-secret -- enable <client> [--stage <stage>] [--region <region>]
       npm run webhook-secret -- show [<client>] [--stage <stage>] [--region <region>]
       npm run webhook-secret -- resend --client <client> --record <id> [--stage <stage>] [--region <region>]
  rotate: a new whsec_ secret signs beside the old one for WEBHOOK_ROTATION_HOURS (default 24), then alone
  enable: the client's webhook, disabled after it answered 410 Gone, is called again
  show:   each webhook client's current secret, a rotation under way, and whether its webhook is disabled
  resend: the record's last event sent again to the client's webhook, with the same webhook-id (receivers drop a copy)
  without --stage: npm start's data directory (DATA_DIR, default .data)`;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

interface Parsed {
  command: 'rotate' | 'enable' | 'show' | 'resend';
  client?: string;
  /** resend: the record whose last event is sent again. */
  record?: string;
  stage?: string;
  region: string;
}

/**
 * Reads the command line (tools/cli/commandLine.ts): a missing value (`--stage --region x` is a forgotten stage, not
 * the stage `--region`), an unknown option or the form without `--` is refused before anything is touched.
 */
const parse = (args: string[], env: NodeJS.ProcessEnv): Parsed => {
  const { values, positionals } = parseCommandLine(
    args,
    { values: ['stage', 'region', 'client', 'record'], npmScript: 'webhook-secret' },
    env,
  );
  const [command, positional, extra] = positionals;
  if (command !== 'rotate' && command !== 'enable' && command !== 'show' && command !== 'resend')
    throw new UsageError(
      `the command must be rotate, enable, show or resend (got ${JSON.stringify(command)})`,
    );
  if (values.region !== undefined && values.stage === undefined)
    throw new UsageError("--region goes with --stage (without --stage, npm start's data directory is used)");
  const region = values.region ?? env.AWS_REGION ?? 'eu-west-1';
  if (command === 'resend') {
    if (positional)
      throw new UsageError(
        `resend takes --client <client> --record <id> (got ${JSON.stringify(positional)})`,
      );
    if (!values.client) throw new UsageError('resend needs --client <client>');
    if (!values.record) throw new UsageError('resend needs --record <id>');
    return { command, client: values.client, record: values.record, stage: values.stage, region };
  }
  if (values.client !== undefined || values.record !== undefined)
    throw new UsageError(`--client and --record go with resend (${command} takes the client's name alone)`);
  if (command !== 'show' && !positional) throw new UsageError(`${command} needs a client name`);
  if (extra) throw new UsageError(`unexpected ${JSON.stringify(extra)}`);
  return { command, client: positional, stage: values.stage, region };
};

const webhookClient = (name: string, clients: Client[]): Client => {
  const client = clients.find((c) => c.name === name);
  if (!client) throw new UsageError(`client "${name}" is not in config/clients.json`);
  if (!client.webhook) throw new UsageError(`client "${name}" declares no webhook in config/clients.json`);
  return client;
};

const describe = (client: string, secrets: WebhookSecrets | undefined, disabled: unknown, now: Date) => {
  if (!secrets) return `${client}: no secret yet (rotate makes one)`;
  const settled = settledWebhookSecrets(secrets, now, rotationWindowMs());
  const lines = [`${client}: ${settled.current}`];
  if (settled.previous && settled.rotatedAt)
    lines.push(
      `  rotating: the previous secret signs too until ${new Date(settled.rotatedAt.getTime() + rotationWindowMs()).toISOString()}`,
    );
  if (disabled)
    lines.push(
      `  DISABLED after a 410 Gone (${JSON.stringify(disabled)}): enable ${client} to call it again`,
    );
  return lines.join('\n');
};

/** Where the secrets and flags are kept: npm start's data directory, or an AWS stage. */
interface Place {
  read(client: string): Promise<WebhookSecrets | undefined>;
  rotate(client: string, now: Date): Promise<WebhookSecrets>;
  disabled(client: string): Promise<unknown>;
  enable(client: string): Promise<boolean>;
  /** The record's last event sent again to the client's webhook (lib/webhooks/resend.ts). */
  resend(client: string, recordId: string): Promise<RecordResendResult>;
  where: string;
  close(): void;
}

/** What a running npm start writes to `<data dir>/runner.json` and this command reads of it. */
interface RunnerInfo {
  dynamoEndpoint?: string;
  webhookReceiverUrl?: string;
  webhookSecretsPrefix?: string;
  env?: Record<string, string>;
}

/**
 * The service's own code pointed at the npm start running on `dataDir` (its records table, its Secrets Manager of
 * webhook secrets, through the endpoints it wrote to runner.json), with this process's webhook calls taken where that
 * npm start takes them (its sandbox receiver for a remote URL); undefined without a running npm start. What it
 * returns undoes the redirection.
 */
const pointAtLocalService = (dataDir: string, clients: Client[]): (() => void) | undefined => {
  let runner: RunnerInfo | undefined;
  try {
    runner = JSON.parse(readFileSync(join(dataDir, 'runner.json'), 'utf8'));
  } catch {
    runner = undefined;
  }
  if (!runner?.dynamoEndpoint || !runner.env?.RECORDS_TABLE) return undefined;
  Object.assign(process.env, runner.env, {
    AWS_ENDPOINT_URL_DYNAMODB: runner.dynamoEndpoint,
    // Written by npm start from serverless.yml's dispatcher; a runner.json older than it: the local stage's.
    WEBHOOK_SECRETS_PREFIX: runner.webhookSecretsPrefix ?? webhookSecretName('local', ''),
  });
  resetSettings();
  return runner.webhookReceiverUrl
    ? redirectWebhookCalls(
        localWebhookRoutes({
          clients,
          receiverUrl: runner.webhookReceiverUrl,
          direct: runner.env.LOCAL_WEBHOOKS === 'direct',
        }),
      )
    : () => {};
};

const notRunning = (dataDir: string) =>
  new UsageError(
    `no npm start is running on ${dataDir} (no runner.json): the flags and records are in its records table`,
  );

const localPlace = (env: NodeJS.ProcessEnv, clients: Client[]): Place => {
  const dataDir = env.DATA_DIR || defaultDataDir();
  const undoRedirect = pointAtLocalService(dataDir, clients);
  const { secrets } = ensureWebhookSecrets(
    dataDir,
    clients.filter((c) => c.webhook).map((c) => c.name),
  );
  const running = () => {
    if (!undoRedirect) throw notRunning(dataDir);
  };
  return {
    read: async (client) => secrets[client],
    rotate: async (client, now) => rotateLocalWebhookSecret(dataDir, client, now),
    disabled: async (client) => (undoRedirect ? tableWebhookSwitch().disabled(client) : undefined),
    enable: async (client) => {
      running();
      return tableWebhookSwitch().enable(client);
    },
    resend: async (client, recordId) => {
      running();
      return resendLastEvent(recordId, { client });
    },
    where: `${dataDir}/webhook-secrets.json (a running npm start's dispatcher reads it within 5 minutes, as on AWS)`,
    close: () => undoRedirect?.(),
  };
};

/**
 * The Secrets Manager secret of a client's webhook on a stage: the name the dispatcher reads (its prefix is
 * WEBHOOK_SECRETS_PREFIX, deploy/webhooks.cjs) and that `rotate` creates.
 *
 * @example
 * webhookSecretName('prod', 'example-dealer') // 'dealer-gateway/prod/webhooks/example-dealer'
 */
export const webhookSecretName = (stage: string, client: string) =>
  `dealer-gateway/${stage}/webhooks/${client}`;

const awsPlace = (stage: string, region: string): Place => {
  const secretsManager = new SecretsManagerClient({ region });
  const table = `dealer-gateway-${stage}-records`;
  // The service's own clients (flags, records, the resend) read these, and the credentials in the environment.
  Object.assign(process.env, {
    RECORDS_TABLE: table,
    AWS_REGION: region,
    WEBHOOK_SECRETS_PREFIX: webhookSecretName(stage, ''),
  });
  resetSettings();
  const nameOf = (client: string) => webhookSecretName(stage, client);
  const read = async (client: string) => {
    try {
      const out = await secretsManager.send(new GetSecretValueCommand({ SecretId: nameOf(client) }));
      const text = out.SecretString ?? '';
      return parseWebhookSecrets(
        client,
        text.trim().startsWith('{') ? JSON.parse(text) : text.trim(),
        `secret ${nameOf(client)}`,
      );
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };
  return {
    read,
    async rotate(client, now) {
      const before = await read(client);
      const after = rotateWebhookSecrets(before, now);
      const value = JSON.stringify(storedWebhookSecrets(after));
      if (before)
        await secretsManager.send(
          new PutSecretValueCommand({ SecretId: nameOf(client), SecretString: value }),
        );
      else
        await secretsManager.send(
          new CreateSecretCommand({
            Name: nameOf(client),
            SecretString: value,
            Description: `Standard Webhooks secret of client ${client}'s webhook (npm run webhook-secret)`,
          }),
        );
      return after;
    },
    disabled: (client) => tableWebhookSwitch().disabled(client),
    enable: (client) => tableWebhookSwitch().enable(client),
    resend: (client, recordId) => resendLastEvent(recordId, { client }),
    where: `Secrets Manager ${nameOf('<client>')} and ${table} (${region}); the dispatcher reads the secret within 5 minutes`,
    close: () => secretsManager.destroy(),
  };
};

/** Says what a resend came to; its exit code: 0 when the receiver took it (2xx), else 1. */
const resent = (result: RecordResendResult, recordId: string, io: Io): number => {
  if (!result.sent) {
    io.err(
      `${recordId}: ${RESEND_REFUSALS[result.why]}${result.why === 'otherClient' ? ` (it is ${result.client}'s)` : ''}\n`,
    );
    return 1;
  }
  const { outcome } = result;
  const answer =
    outcome.status === undefined
      ? `no answer (${outcome.kind === 'retry' ? outcome.error : ''})`
      : `HTTP ${outcome.status}`;
  const line = `${recordId}: event ${result.webhookId} sent again to ${result.client}'s webhook: ${answer}\n`;
  if (outcome.kind === 'delivered') io.out(line);
  else io.err(line);
  return outcome.kind === 'delivered' ? 0 : 1;
};

/**
 * Runs the command; resolves with the exit code.
 *
 * @example
 * process.exitCode = await runWebhookSecret(['rotate', 'example-dealer'], process.env, io);
 */
export const runWebhookSecret = async (
  args: string[],
  env: NodeJS.ProcessEnv,
  io: Io,
  options: { now?: () => Date; clients?: Client[] } = {},
): Promise<number> => {
  const clients = options.clients ?? clientsConfig.clients;
  const now = (options.now ?? (() => new Date()))();
  let parsed: Parsed;
  try {
    parsed = parse(args, env);
    if (parsed.client) webhookClient(parsed.client, clients);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  const place = parsed.stage ? awsPlace(parsed.stage, parsed.region) : localPlace(env, clients);
  try {
    if (parsed.command === 'rotate') {
      const client = parsed.client as string;
      const after = await place.rotate(client, now);
      io.out(
        `${client}: new secret ${after.current}\n` +
          (after.previous
            ? `  the previous one signs too until ${new Date(now.getTime() + rotationWindowMs()).toISOString()}: give the client the new one before then\n`
            : '  (no previous secret)\n') +
          `  in ${place.where}\n`,
      );
      return 0;
    }
    if (parsed.command === 'enable') {
      const client = parsed.client as string;
      const was = await place.enable(client);
      io.out(was ? `${client}: webhook enabled again\n` : `${client}: webhook was not disabled\n`);
      return 0;
    }
    if (parsed.command === 'resend')
      return resent(
        await place.resend(parsed.client as string, parsed.record as string),
        parsed.record as string,
        io,
      );
    const names = parsed.client ? [parsed.client] : clients.filter((c) => c.webhook).map((c) => c.name);
    for (const client of names)
      io.out(`${describe(client, await place.read(client), await place.disabled(client), now)}\n`);
    return 0;
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    place.close();
  }
};
