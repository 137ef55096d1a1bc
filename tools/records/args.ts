import { parseArgs } from 'node:util';
import type { ClientMode } from '../../lib/clients/types.ts';
import type { RecordStatus } from '../../lib/records/types.ts';
import { RECORD_KINDS, RECORD_STATUSES } from '../../lib/store/statusIndex.ts';
import { CLIENT_MODES, DEFAULT_REGION, KIND_NAMES } from './constants.ts';
import { UsageError } from './errors.ts';
import type { RecordsOptions } from './types.ts';

const VALUE_OPTIONS = [
  'status',
  'older-than',
  'kind',
  'client',
  'dealer',
  'frame',
  'limit',
  'stage',
  'region',
  'id',
  'mode',
] as const;
const FLAG_OPTIONS = ['counts', 'json', 'show-personal', 'progress', 'help'] as const;
type ValueOption = (typeof VALUE_OPTIONS)[number];
type FlagOption = (typeof FLAG_OPTIONS)[number];

const DURATION = /^(\d+)(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const WHOLE = /^\d+$/;

/*
 * `npm run records --status rejected` (no `--`): npm (10 and 11 alike, through nopt) takes an option it does not
 * know, written without `=`, as a boolean setting of its own: it sets npm_config_status=true in the script's
 * environment and passes `rejected` on as a positional argument. The order of the settings is lost (the environment
 * has none, and npm rewrites its own process title), so a value goes back to its option by what it looks like:
 * a state, a kind, an age, a region; a number to --dealer or --limit if only one of them lost its value; anything
 * else to the one remaining option that lost its value. What cannot be told apart is refused with the `--` form.
 */
const LOOKS: Partial<Record<ValueOption, (value: string) => boolean>> = {
  status: (value) => (RECORD_STATUSES as readonly string[]).includes(value),
  kind: (value) => value in KIND_NAMES,
  'older-than': (value) => DURATION.test(value),
  region: (value) => REGION.test(value),
  mode: (value) => (CLIENT_MODES as readonly string[]).includes(value),
};

const envName = (option: string) => `npm_config_${option.replaceAll('-', '_')}`;

/** Puts the values npm separated from their options back (see above); returns the positionals nobody claimed. */
const recoverNpmSettings = (
  values: Partial<Record<ValueOption, string>> & Partial<Record<FlagOption, boolean>>,
  positionals: string[],
  env: NodeJS.ProcessEnv,
): string[] => {
  const rest = [...positionals];
  const take = (matches: (value: string) => boolean): string | undefined => {
    const at = rest.findIndex(matches);
    return at === -1 ? undefined : rest.splice(at, 1)[0];
  };
  for (const flag of FLAG_OPTIONS) {
    if (values[flag] === undefined && env[envName(flag)] === 'true') values[flag] = true;
  }
  const lost: ValueOption[] = [];
  for (const option of VALUE_OPTIONS) {
    const setting = env[envName(option)];
    if (values[option] !== undefined || setting === undefined || setting === '') continue;
    if (setting === 'true') lost.push(option);
    else values[option] = setting; // --status=rejected: npm kept the value
  }
  const unresolved: ValueOption[] = [];
  for (const option of lost) {
    const looks = LOOKS[option];
    if (!looks) continue;
    const value = take(looks);
    if (value === undefined) unresolved.push(option);
    else values[option] = value;
  }
  const numeric: ValueOption[] = lost.filter((option) => option === 'dealer' || option === 'limit');
  const other = lost.filter((option) => !LOOKS[option] && !numeric.includes(option));
  const ambiguous = [...(numeric.length > 1 ? numeric : []), ...(other.length > 1 ? other : [])];
  if (ambiguous.length > 0) {
    const written = ambiguous.map((option) => `--${option} <value>`).join(' ');
    throw new UsageError(
      `npm took ${ambiguous.map((o) => `--${o}`).join(', ')} as settings of its own and passed their values on ` +
        `without their names, in an order it does not keep: write npm run records -- ${written} ` +
        `(or --${ambiguous[0]}=<value>)`,
    );
  }
  if (numeric.length === 1) {
    const value = take((candidate) => WHOLE.test(candidate));
    if (value === undefined) unresolved.push(numeric[0]);
    else values[numeric[0]] = value;
  }
  if (other.length === 1) {
    const value = rest.shift();
    if (value === undefined) unresolved.push(other[0]);
    else values[other[0]] = value;
  }
  // `--status lost`: the one value left goes to the one option left, whose check then names what is wrong.
  if (unresolved.length === 1 && rest.length > 0) values[unresolved[0]] = rest.shift();
  else if (unresolved.length > 0) throw new UsageError(`--${unresolved[0]} needs a value`);
  return rest;
};

const positiveWhole = (option: string, value: string): number => {
  const number = Number(value);
  if (!WHOLE.test(value) || number < 1)
    throw new UsageError(`--${option} must be a whole number of at least 1, not "${value}"`);
  return number;
};

/**
 * Reads the arguments of `npm run records`: the `npm run records -- ...` form and `node scripts/records.ts ...`, and
 * the form without `--` that npm turns into settings of its own (recovered from the npm_config_* variables it sets,
 * only when npm runs the `records` script).
 *
 * @throws UsageError naming the argument at fault.
 * @example
 * parseRecordsArgs(['--status', 'failed', '--older-than', '2h'], {}).olderThanMs // 7_200_000
 * parseRecordsArgs(['rejected'], { npm_lifecycle_event: 'records', npm_config_status: 'true' }).statuses // ['rejected']
 */
export const parseRecordsArgs = (argv: string[], env: NodeJS.ProcessEnv = process.env): RecordsOptions => {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...Object.fromEntries(VALUE_OPTIONS.map((option) => [option, { type: 'string' as const }])),
        ...Object.fromEntries(FLAG_OPTIONS.map((option) => [option, { type: 'boolean' as const }])),
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Partial<Record<ValueOption, string>> & Partial<Record<FlagOption, boolean>>;
  const positionals =
    env.npm_lifecycle_event === 'records'
      ? recoverNpmSettings(values, parsed.positionals, env)
      : parsed.positionals;

  if (positionals.length > 1) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (positionals.length === 1) {
    if (values.id !== undefined) throw new UsageError(`unexpected argument: ${positionals[0]}`);
    values.id = positionals[0];
  }
  if (values.status !== undefined && !(RECORD_STATUSES as readonly string[]).includes(values.status))
    throw new UsageError(`--status must be one of ${RECORD_STATUSES.join(', ')}, not "${values.status}"`);
  if (values.mode !== undefined && !(CLIENT_MODES as readonly string[]).includes(values.mode))
    throw new UsageError(`--mode must be test or live, not "${values.mode}"`);
  if (values.kind !== undefined && !(values.kind in KIND_NAMES))
    throw new UsageError(`--kind must be sales or cases, not "${values.kind}"`);
  let olderThanMs: number | undefined;
  if (values['older-than'] !== undefined) {
    const match = DURATION.exec(values['older-than']);
    if (!match)
      throw new UsageError(
        `--older-than must be minutes, hours or days (30m, 2h, 3d), not "${values['older-than']}"`,
      );
    olderThanMs = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  }
  if (values.region !== undefined && values.stage === undefined)
    throw new UsageError('--region goes with --stage (without --stage, the running npm start is read)');
  for (const option of ['client', 'frame', 'stage', 'id'] as const) {
    if (values[option] === '') throw new UsageError(`--${option} needs a value`);
  }

  const filters = (
    ['status', 'older-than', 'kind', 'client', 'dealer', 'frame', 'limit', 'mode'] as const
  ).filter((option) => values[option] !== undefined);
  const mode = values.id !== undefined ? 'one' : values.counts ? 'counts' : 'list';
  if (mode === 'one' && (filters.length > 0 || values.counts))
    throw new UsageError(
      `one record by id takes no filters (${[...filters, ...(values.counts ? ['counts'] : [])].map((o) => `--${o}`).join(', ')})`,
    );
  if (mode !== 'one' && values['show-personal'])
    throw new UsageError('--show-personal goes with one record by id: listings never show personal data');
  if (values.stage !== undefined && values['show-personal'])
    throw new UsageError(
      '--show-personal reads the local service only: on AWS the operators’ role cannot read personal fields',
    );
  if (mode === 'counts' && (values.frame !== undefined || values.limit !== undefined))
    throw new UsageError('--counts counts by state per kind: it does not combine with --frame or --limit');

  return {
    mode,
    ...(values.id === undefined ? {} : { id: values.id }),
    statuses: values.status === undefined ? [...RECORD_STATUSES] : [values.status as RecordStatus],
    kinds: values.kind === undefined ? [...RECORD_KINDS] : [KIND_NAMES[values.kind]],
    ...(olderThanMs === undefined ? {} : { olderThanMs }),
    ...(values.client === undefined ? {} : { client: values.client }),
    ...(values.mode === undefined ? {} : { clientMode: values.mode as ClientMode }),
    ...(values.dealer === undefined ? {} : { dealer: positiveWhole('dealer', values.dealer) }),
    ...(values.frame === undefined ? {} : { frame: values.frame }),
    json: values.json ?? false,
    ...(values.limit === undefined ? {} : { limit: positiveWhole('limit', values.limit) }),
    ...(values.stage === undefined ? {} : { stage: values.stage }),
    region: values.region ?? DEFAULT_REGION,
    showPersonal: values['show-personal'] ?? false,
    progress: values.progress ?? false,
    help: values.help ?? false,
  };
};
