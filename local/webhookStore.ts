/**
 * The local event bus's durable deliveries: one file per webhook delivery under `<dataDir>/webhooks/pending/`
 * (written before PutEvents answers, so nothing accepted is lost across a restart), moved to
 * `<dataDir>/webhooks/dead/` once given up (the local dead-letter queue).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** An event as EventBridge hands it to a target (on AWS the webhook queue holds exactly this). */
export interface EventEnvelope {
  version: '0';
  id: string;
  'detail-type': string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/** One event on its way to one client's webhook. */
export interface WebhookDelivery {
  /** The envelope's id: one delivery per event and webhook. */
  id: string;
  client: string;
  envelope: EventEnvelope;
  /** When the bus accepted the event (epoch ms): retries stop once it is older than the maximum age. */
  createdAt: number;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due (epoch ms). */
  nextAttemptAt: number;
  /** Why the last attempt failed: a status or an error name, never a body. */
  lastError?: string;
}

export interface WebhookStore {
  pendingDir: string;
  deadDir: string;
  /** Writes (or rewrites) a pending delivery durably: temp file, fsync, rename, fsync of the directory. */
  save(delivery: WebhookDelivery): Promise<void>;
  /** Forgets a delivered (or dropped) delivery. */
  remove(id: string): Promise<void>;
  /** Moves a delivery that was given up to the dead directory. */
  bury(delivery: WebhookDelivery): Promise<void>;
  /** Every pending delivery, oldest first (unreadable files are skipped and reported through `onCorrupt`). */
  pending(onCorrupt?: (file: string) => void): Promise<WebhookDelivery[]>;
  /** Every dead delivery. */
  dead(): Promise<WebhookDelivery[]>;
}

/** Only ids the bus made (uuids) become file names; anything else would be a path. */
const fileName = (id: string) => {
  if (!/^[0-9a-zA-Z-]{1,64}$/.test(id)) throw new Error(`not a delivery id: ${JSON.stringify(id)}`);
  return `${id}.json`;
};

const writeDurably = async (dir: string, name: string, content: string) => {
  const temp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'w', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, join(dir, name));
  await syncDir(dir);
};

/** The rename itself survives a crash only once the directory is flushed. */
const syncDir = async (dir: string) => {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
};

const readAll = async (dir: string, onCorrupt?: (file: string) => void): Promise<WebhookDelivery[]> => {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
  const deliveries: WebhookDelivery[] = [];
  for (const name of names) {
    try {
      deliveries.push(JSON.parse(await readFile(join(dir, name), 'utf8')) as WebhookDelivery);
    } catch {
      onCorrupt?.(name);
    }
  }
  return deliveries.sort((a, b) => a.createdAt - b.createdAt);
};

/**
 * Opens (creating them) the pending and dead directories of `dataDir`.
 *
 * @example
 * const store = await openWebhookStore('.data');
 * await store.save(delivery); // .data/webhooks/pending/<id>.json
 */
export const openWebhookStore = async (dataDir: string): Promise<WebhookStore> => {
  const pendingDir = join(dataDir, 'webhooks', 'pending');
  const deadDir = join(dataDir, 'webhooks', 'dead');
  await Promise.all([mkdir(pendingDir, { recursive: true }), mkdir(deadDir, { recursive: true })]);
  return {
    pendingDir,
    deadDir,
    save: (delivery) => writeDurably(pendingDir, fileName(delivery.id), JSON.stringify(delivery)),
    remove: async (id) => {
      await rm(join(pendingDir, fileName(id)), { force: true });
    },
    bury: async (delivery) => {
      await writeDurably(deadDir, fileName(delivery.id), JSON.stringify(delivery));
      await rm(join(pendingDir, fileName(delivery.id)), { force: true });
    },
    pending: (onCorrupt) => readAll(pendingDir, onCorrupt),
    dead: () => readAll(deadDir),
  };
};
