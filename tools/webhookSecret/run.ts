/**
 * `npm run webhook-secret -- <rotate|enable|show> [<client>] [--stage <stage>] [--region <region>]`: a client's
 * webhook secret and its disabled flag, in npm start's data directory (no --stage) or on an AWS stage (Secrets
 * Manager `dealer-gateway/<stage>/webhooks/<client>`, the records table's `webhook#<client>` item).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteItemCommand, DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import type { Client } from '../../lib/clients/types.ts';
import { webhookFlagKey } from '../../lib/webhooks/disabledWebhooks.ts';
import {
  parseWebhookSecrets,
  rotateWebhookSecrets,
  rotationWindowMs,
  settledWebhookSecrets,
  storedWebhookSecrets,
  type WebhookSecrets,
} from '../../lib/webhooks/secrets.ts';
import { defaultDataDir } from '../../local/project.ts';
import { ensureWebhookSecrets, rotateLocalWebhookSecret } from '../../local/webhookSecrets.ts';
import { parseCommandLine, UsageError } from '../cli/commandLine.ts';

export const USAGE = `usage: npm run webhook-secret -- rotate <client> [--stage <stage>] [--region <region>]
       npm run webhook-secret -- enable <client> [--stage <stage>] [--region <region>]
       npm run webhook-secret -- show [<client>] [--stage <stage>] [--region <region>]
  rotate: a new whsec_ secret signs beside the old one for WEBHOOK_ROTATION_HOURS (default 24), then alone
  enable: the client's webhook, disabled after it answered 410 Gone, is called again
  show:   each webhook client's current secret, a rotation under way, and whether its webhook is disabled
  without --stage: npm start's data directory (DATA_DIR, default .data)`;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

interface Parsed {
  command: 'rotate' | 'enable' | 'show';
  client?: string;
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
    { values: ['stage', 'region'], npmScript: 'webhook-secret' },
    env,
  );
  const [command, client, extra] = positionals;
  if (command !== 'rotate' && command !== 'enable' && command !== 'show')
    throw new UsageError(`the command must be rotate, enable or show (got ${JSON.stringify(command)})`);
  if (command !== 'show' && !client) throw new UsageError(`${command} needs a client name`);
  if (extra) throw new UsageError(`unexpected ${JSON.stringify(extra)}`);
  if (values.region !== undefined && values.stage === undefined)
    throw new UsageError("--region goes with --stage (without --stage, npm start's data directory is used)");
  return { command, client, stage: values.stage, region: values.region ?? env.AWS_REGION ?? 'eu-west-1' };
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
  where: string;
  close(): void;
}

/**
 * The flags of the npm start running on `dataDir`: the `webhook#<client>` items of its records table, as on AWS
 * (read through the endpoint it wrote to runner.json). Without a running npm start there is no table to read.
 */
const localFlags = (dataDir: string) => {
  let runner: { dynamoEndpoint?: string; env?: Record<string, string> } | undefined;
  try {
    runner = JSON.parse(readFileSync(join(dataDir, 'runner.json'), 'utf8'));
  } catch {
    runner = undefined;
  }
  const table = runner?.env?.RECORDS_TABLE;
  if (!runner?.dynamoEndpoint || !table) return undefined;
  const dynamo = new DynamoDBClient({
    endpoint: runner.dynamoEndpoint,
    region: runner.env?.AWS_REGION ?? 'eu-west-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return { dynamo, table };
};

const notRunning = (dataDir: string) =>
  new UsageError(
    `no npm start is running on ${dataDir} (no runner.json): the flags are in its records table`,
  );

const localPlace = (env: NodeJS.ProcessEnv, clients: Client[]): Place => {
  const dataDir = env.DATA_DIR || defaultDataDir();
  const flags = localFlags(dataDir);
  const { secrets } = ensureWebhookSecrets(
    dataDir,
    clients.filter((c) => c.webhook).map((c) => c.name),
  );
  return {
    read: async (client) => secrets[client],
    rotate: async (client, now) => rotateLocalWebhookSecret(dataDir, client, now),
    disabled: async (client) => (flags ? readFlag(flags.dynamo, flags.table, client) : undefined),
    enable: async (client) => {
      if (!flags) throw notRunning(dataDir);
      return deleteFlag(flags.dynamo, flags.table, client);
    },
    where: `${dataDir}/webhook-secrets.json (a running npm start's dispatcher reads it within 5 minutes, as on AWS)`,
    close: () => flags?.dynamo.destroy(),
  };
};

/** A client's flag item, or undefined. */
const readFlag = async (dynamo: DynamoDBClient, table: string, client: string) => {
  const out = await dynamo.send(
    new GetItemCommand({
      TableName: table,
      Key: { pk: { S: webhookFlagKey(client) } },
      ConsistentRead: true,
    }),
  );
  return out.Item
    ? { at: out.Item.webhookDisabledAt?.S, status: Number(out.Item.webhookDisabledStatus?.N) }
    : undefined;
};

/** Deletes a client's flag item: true when there was one. */
const deleteFlag = async (dynamo: DynamoDBClient, table: string, client: string) => {
  const out = await dynamo.send(
    new DeleteItemCommand({
      TableName: table,
      Key: { pk: { S: webhookFlagKey(client) } },
      ReturnValues: 'ALL_OLD',
    }),
  );
  return out.Attributes !== undefined;
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
  const dynamo = new DynamoDBClient({ region });
  const table = `dealer-gateway-${stage}-records`;
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
    disabled: (client) => readFlag(dynamo, table, client),
    enable: (client) => deleteFlag(dynamo, table, client),
    where: `Secrets Manager ${nameOf('<client>')} and ${table} (${region}); the dispatcher reads the secret within 5 minutes`,
    close: () => {
      secretsManager.destroy();
      dynamo.destroy();
    },
  };
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
