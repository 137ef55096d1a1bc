/**
 * Preloaded (`node --import`) into the serverless-offline child: a bounded, warm pool of handler instances per
 * function.
 *
 * serverless-offline runs each Node handler instance in its own worker thread (one Lambda container: its own
 * module state, one invocation at a time, killed on timeout). But it starts a new thread for every request that
 * finds no idle one, so a burst of 100 requests right after start loads the handler's modules in 100 threads at
 * once; on two cores none finishes inside the 10 s timeout and the whole burst answers 504. Here a function has
 * at most `LOCAL_LAMBDA_CONCURRENCY` instances (default: see `defaultConcurrency`); a request that finds them
 * all busy waits for the next one to become idle (Lambda would add a container; a laptop has no more cores to
 * give it). The function timeout starts when the invocation does, as on Lambda, not while it waits.
 *
 * It patches two methods of serverless-offline 14 (`LambdaFunctionPool#get`, `LambdaFunction#runHandler`) and
 * refuses to start on any other major version rather than run unbounded.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isMainThread } from 'node:worker_threads';

/** Measured (bench `local stack`): 4 instances a function keep two cores busy; more only add load time. */
export const defaultConcurrency = 4;

interface LambdaFunctionLike {
  readonly status: 'IDLE' | 'BUSY';
  setEvent(event: unknown): void;
  setClientContext(clientContext: unknown): void;
  runHandler(): Promise<unknown>;
}

type PoolGet = (functionKey: string, functionDefinition: unknown) => LambdaFunctionLike;

interface FunctionSlots {
  instances: Set<LambdaFunctionLike>;
  /** Invocations waiting for an idle instance, first come first served. */
  waiting: Array<(instance: LambdaFunctionLike) => void>;
}

const concurrencyFrom = (value: string | undefined): number => {
  if (value === undefined || value === '') return Math.max(defaultConcurrency, availableParallelism());
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) {
    throw new Error(
      `LOCAL_LAMBDA_CONCURRENCY must be a whole number of at least 1, got ${JSON.stringify(value)}`,
    );
  }
  return parsed;
};

const loadOffline = async () => {
  const entry = import.meta.resolve('serverless-offline');
  const manifest = JSON.parse(readFileSync(new URL('../package.json', entry), 'utf8')) as {
    version: string;
  };
  if (!manifest.version.startsWith('14.')) {
    throw new Error(`local/warmPool.ts patches serverless-offline 14, found ${manifest.version}`);
  }
  // The package's exports stop at `./lambda`; these are the very modules offline itself loads (same URLs).
  const pool = await import(new URL('./lambda/LambdaFunctionPool.js', entry).href);
  const fn = await import(new URL('./lambda/LambdaFunction.js', entry).href);
  return { LambdaFunctionPool: pool.default, LambdaFunction: fn.default };
};

/**
 * Bounds every function of a serverless-offline LambdaFunctionPool to `limit` instances.
 *
 * @example
 * installWarmPool(LambdaFunctionPool, LambdaFunction, 4);
 */
export function installWarmPool(
  // biome-ignore lint/suspicious/noExplicitAny: serverless-offline ships no types
  LambdaFunctionPool: { prototype: any },
  // biome-ignore lint/suspicious/noExplicitAny: serverless-offline ships no types
  LambdaFunction: { prototype: any },
  limit: number,
): void {
  const originalGet: PoolGet = LambdaFunctionPool.prototype.get;
  const originalRun: () => Promise<unknown> = LambdaFunction.prototype.runHandler;
  if (typeof originalGet !== 'function' || typeof originalRun !== 'function') {
    throw new Error('serverless-offline has no LambdaFunctionPool#get / LambdaFunction#runHandler to bound');
  }
  const byFunction = new Map<string, FunctionSlots>();
  const functionKeys = new WeakMap<LambdaFunctionLike, string>();
  const slotsOf = (name: string): FunctionSlots => {
    let slots = byFunction.get(name);
    if (!slots) {
      slots = { instances: new Set(), waiting: [] };
      byFunction.set(name, slots);
    }
    return slots;
  };

  LambdaFunction.prototype.runHandler = async function runHandler(this: LambdaFunctionLike) {
    try {
      return await originalRun.call(this);
    } finally {
      // Now IDLE: the longest-waiting invocation of this function takes it, synchronously, before anyone else.
      const next = byFunction.get(functionKeys.get(this) ?? '')?.waiting.shift();
      next?.(this);
    }
  };

  LambdaFunctionPool.prototype.get = function get(functionKey: string, functionDefinition: unknown) {
    const slots = slotsOf(functionKey);
    // Callers (HTTP, invoke) call setEvent and runHandler synchronously after get: IDLE means free.
    for (const instance of slots.instances) if (instance.status === 'IDLE') return instance;
    if (slots.instances.size < limit) {
      const instance = originalGet.call(this, functionKey, functionDefinition);
      slots.instances.add(instance);
      functionKeys.set(instance, functionKey);
      return instance;
    }
    return queuedInvocation(slots);
  };
}

/** Stands in for an instance until one is idle; its runHandler resolves with that instance's result. */
const queuedInvocation = (slots: FunctionSlots): LambdaFunctionLike => {
  let event: unknown;
  let clientContext: unknown;
  let hasClientContext = false;
  return {
    status: 'BUSY',
    setEvent(value) {
      event = value;
    },
    setClientContext(value) {
      clientContext = value;
      hasClientContext = true;
    },
    // Handed over synchronously by the instance that just finished, so no new request can take it first.
    runHandler: () =>
      new Promise((resolve, reject) => {
        slots.waiting.push((instance) => {
          if (hasClientContext) instance.setClientContext(clientContext);
          instance.setEvent(event);
          instance.runHandler().then(resolve, reject);
        });
      }),
  };
};

if (isMainThread && process.env.LOCAL_STACK_WARM_POOL !== 'off') {
  const { LambdaFunctionPool, LambdaFunction } = await loadOffline();
  installWarmPool(LambdaFunctionPool, LambdaFunction, concurrencyFrom(process.env.LOCAL_LAMBDA_CONCURRENCY));
}
