/**
 * The operators' command lines (`npm run records`, `npm run redrive`, `npm run webhook-secret`) read their arguments
 * here, so that each answers a mistake the same way: a {@link UsageError} naming it (the script prints it with its
 * usage and exits with code 2) before anything is read or changed, never Node's parse error with its stack.
 */
import { parseArgs } from 'node:util';

/** Bad arguments: the script prints the message and its usage, and exits with code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The options a command takes: those with a value (`--stage prod`) and switches (`--json`). */
export interface CommandLineOptions<V extends string, F extends string> {
  values: readonly V[];
  flags?: readonly F[];
  /**
   * The npm script that runs the command (`records`): when npm runs it, an option written without `--` in front
   * (`npm run records --status failed`) became npm's own setting (npm_config_status) and its value a bare argument
   * (npm 10 and 11 alike), in an order npm does not keep. Such a command line is refused, naming the `--` form.
   */
  npmScript?: string;
}

/** The arguments read: each option's value (a switch's `true`) and the others in order. */
export interface CommandLine<V extends string, F extends string> {
  values: Partial<Record<V, string>> & Partial<Record<F, boolean>>;
  positionals: string[];
}

const npmSetting = (option: string) => `npm_config_${option.replaceAll('-', '_')}`;

/** The options npm took as its own settings when it ran `script`: none when npm did not run it. */
const takenByNpm = (script: string, options: readonly string[], env: NodeJS.ProcessEnv): string[] =>
  env.npm_lifecycle_event === script ? options.filter((option) => env[npmSetting(option)] !== undefined) : [];

/**
 * Reads a command line: every option must be one the command takes, every value option must have a value (not
 * empty, not the next option: `--stage --region x` is a forgotten stage, not the stage `--region`), a switch takes
 * none. `--` ends the options.
 *
 * @throws UsageError naming the argument at fault.
 * @example
 * parseCommandLine(['erp', '--stage', 'prod'], { values: ['stage', 'region'] }, {})
 * // { values: { stage: 'prod' }, positionals: ['erp'] }
 * parseCommandLine(['erp', '--dealer', '1234'], { values: ['stage', 'region'] }, {}) // throws: unknown option --dealer
 * parseCommandLine(['erp', '--stage'], { values: ['stage', 'region'] }, {}) // throws: --stage needs a value
 */
export const parseCommandLine = <V extends string, F extends string = never>(
  argv: readonly string[],
  options: CommandLineOptions<V, F>,
  env: NodeJS.ProcessEnv,
): CommandLine<V, F> => {
  const valueOptions: readonly string[] = options.values;
  const flagOptions: readonly string[] = options.flags ?? [];
  if (options.npmScript !== undefined) {
    // First: what npm took leaves the rest out of order, whatever else is wrong with it.
    const taken = takenByNpm(options.npmScript, [...valueOptions, ...flagOptions], env);
    if (taken.length > 0) {
      const written = taken.map((option) => `--${option}${valueOptions.includes(option) ? ' <value>' : ''}`);
      throw new UsageError(
        `npm took ${taken.map((option) => `--${option}`).join(', ')} for its own setting${taken.length > 1 ? 's' : ''}: ` +
          `write npm run ${options.npmScript} -- ${written.join(' ')} (the -- hands them to the tool)`,
      );
    }
  }
  // Not strict: Node's own refusals would be its error codes and texts; each case is named here instead.
  const { tokens } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    tokens: true,
    options: {
      ...Object.fromEntries(valueOptions.map((option) => [option, { type: 'string' as const }])),
      ...Object.fromEntries(flagOptions.map((option) => [option, { type: 'boolean' as const }])),
    },
  });
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    if (valueOptions.includes(token.name)) {
      const value = token.value;
      if (value === undefined || value === '' || (!token.inlineValue && value.startsWith('-')))
        throw new UsageError(`${token.rawName} needs a value`);
      values[token.name] = value;
    } else if (flagOptions.includes(token.name)) {
      if (token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
      values[token.name] = true;
    } else throw new UsageError(`unknown option ${token.rawName}`);
  }
  return { values: values as CommandLine<V, F>['values'], positionals };
};
