/*
 * The one door of lib/ to the process's environment. A setting is read and parsed once per cold start (a Lambda
 * container's environment does not change while it lives) and then remembered; tests, which change the
 * environment between tests, forget what was read with resetSettings(). Left to their libraries: AWS_* (region,
 * endpoints, credentials: lib/aws follows the SDK's conventions, so the SDK and the small client agree) and
 * POWERTOOLS_* (lib/observability hands them to Powertools, which reads them itself).
 */

/** An environment: the process's, or one a test or an example gives. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * A setting, or a group of settings read together: called without an environment it reads the process's once
 * per cold start and remembers the result (a bad value throws, naming the variable, and is read again next time);
 * called with one it reads that one and remembers nothing.
 */
export type Setting<T> = (env?: Environment) => T;

const forgetters = new Set<() => void>();

/**
 * The process's environment as it is now, for a module that hands a whole environment on (the downstream
 * adapters' configuration, read when a client is built; the secret settings).
 *
 * @example
 * const config = erpConfigFromEnv({ ...environment(), ERP_PASSWORD: secret });
 */
export const environment = (): Environment => process.env;

/**
 * Makes a setting of its parser.
 *
 * @example
 * const recordsTable = setting((env) => required('RECORDS_TABLE', env.RECORDS_TABLE));
 * recordsTable() // read once, then remembered
 * recordsTable({ RECORDS_TABLE: 'records' }) // 'records'
 */
export const setting = <T>(parse: (env: Environment) => T): Setting<T> => {
  let read: { value: T } | undefined;
  forgetters.add(() => {
    read = undefined;
  });
  return (env) => {
    if (env) return parse(env);
    read ??= { value: parse(process.env) };
    return read.value;
  };
};

/**
 * Forgets every setting read, so that the next use reads the environment again: for tests (and the local runner)
 * that change it.
 *
 * @example
 * process.env.RECONCILE_MAX_PER_RUN = '5';
 * resetSettings();
 */
export const resetSettings = (): void => {
  for (const forget of forgetters) forget();
};
