/**
 * `npm start`: the whole service on this machine (see local/stack.ts). Prints exactly one line,
 * `ready: http://localhost:<port>`, on stdout once it accepts requests; everything else goes to stderr.
 * Env: PORT (default 3000, 0 = any free port), DATA_DIR (default <project>/.data), DEBUG (show
 * serverless-offline's output and start-up timings). SIGINT / SIGTERM stop everything and exit 0.
 */
import { clientNamed } from '../lib/clients/clientsConfig.ts';
import { ensureLocalKeys } from '../local/apiKeys.ts';
import { ensureLocalContentIdKey } from '../local/contentIdKey.ts';
import { startLocalDelivery } from '../local/delivery.ts';
import { killGroup, onShutdownSignal } from '../local/processes.ts';
import { defaultDataDir } from '../local/project.ts';
import type { LocalStack } from '../local/stack.ts';

const port = process.env.PORT ? Number(process.env.PORT) : 3000;
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}`);
  process.exit(1);
}

const dataDir = defaultDataDir();
const localKeys = ensureLocalKeys(dataDir);
const contentIdKey = ensureLocalContentIdKey(dataDir);

const startup = new AbortController();
let starting: Promise<LocalStack> | undefined;
let started: LocalStack | undefined;

let parentWatch: NodeJS.Timeout | undefined;

// Signal handling first: loading the stack (AWS SDK, fauxqs, dynalite) takes a few hundred ms.
onShutdownSignal(
  async () => {
    // Stopping already: npm going away now (as on SIGHUP) is no second signal.
    clearInterval(parentWatch);
    // During start-up, the abort makes startLocalStack stop whatever it started, then reject.
    startup.abort(new Error('interrupted'));
    const stack = await starting?.catch(() => undefined);
    await stack?.stop();
    return 0;
  },
  () => {
    // Second signal: no more waiting. (If offline is still starting, its orphan guard sees us exit.)
    if (started) killGroup(started.offlinePid, 'SIGKILL');
  },
);

// `kill <npm pid>` stops npm without passing the signal on: when our parent goes away, stop as on SIGTERM.
const parentAtStart = process.ppid;
parentWatch = setInterval(() => {
  if (process.ppid !== parentAtStart) process.emit('SIGTERM', 'SIGTERM');
}, 500).unref();

const { startLocalStack } = await import('../local/stack.ts');
starting = startLocalStack({
  port,
  dataDir,
  signal: startup.signal,
  // Offline runs the TypeScript handlers themselves (not the bundles) and checks keys against the local file; the
  // intake derives content ids with the local stage's key. A failing webhook is tried again within seconds here
  // (AWS: from a minute up to 6 h apart), as many times.
  env: {
    HANDLER_CODE: 'typescript',
    API_KEYS_FILE: localKeys.file,
    CONTENT_ID_KEY: contentIdKey,
    WEBHOOK_RETRY_BASE_SECONDS: process.env.WEBHOOK_RETRY_BASE_SECONDS ?? '1',
    WEBHOOK_RETRY_CAP_SECONDS: process.env.WEBHOOK_RETRY_CAP_SECONDS ?? '60',
  },
  // Delivery: sandboxes, re-queueing of records still `accepted`, and the worker pollers.
  onStarted: startLocalDelivery,
});
starting.then(
  (stack) => {
    started = stack;
    if (startup.signal.aborted) return; // shutting down already
    stack.crashed.then(async (error) => {
      console.error(`stopping: ${error.message}`);
      await stack.stop().catch(() => {});
      process.exit(1);
    });
    for (const [client, key] of Object.entries(localKeys.keys)) {
      const note = localKeys.created.includes(client) ? ' (new development key)' : '';
      // A test client's records are answered by the simulators: its key says so where it is shown.
      const mode = clientNamed(client)?.mode === 'test' ? ' (test mode)' : '';
      process.stderr.write(`[local] API key of ${client}${mode}: ${key}${note}\n`);
    }
    // The console's sign-in provider, and its development users: one line each, its email and this start's password.
    process.stderr.write(`[local] console sign-in provider: ${stack.consoleSignIn.issuer}\n`);
    for (const user of stack.consoleSignIn.users) {
      process.stderr.write(
        `[local] console sign-in ${user.email} (group ${user.group}): password ${user.password}\n`,
      );
    }
    process.stdout.write(`ready: ${stack.url}\n`);
  },
  (error: unknown) => {
    if (startup.signal.aborted) return; // the signal handler exits once start-up has cleaned up
    console.error(`npm start failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
