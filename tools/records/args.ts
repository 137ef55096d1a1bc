import type { ClientMode } from '../../lib/clients/types.ts';
import type { RecordStatus } from '../../lib/records/types.ts';
import { RECORD_STATUSES } from '../../lib/store/statusIndex.ts';
import { RECORD_KINDS } from '../../lib/types.ts';
import { parseCommandLine } from '../cli/commandLine.ts';
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
  'trace',
] as const;
const FLAG_OPTIONS = ['counts', 'json', 'show-personal', 'progress', 'help'] as const;

const DURATION = /^(\d+)(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const WHOLE = /^\d+$/;

const positiveWhole = (option: string, value: string): number => {
  const number = Number(value);
  if (!WHOLE.test(value) || number < 1)
    throw new UsageError(`--${option} must be a whole number of at least 1, not "${value}"`);
  return number;
};

/**
 * Reads the arguments of `npm run records -- ...` (and `node scripts/records.ts ...`). The form without `--`, which
 * npm turns into settings of its own, is refused with the `--` form named.
 *
 * @throws UsageError naming the argument at fault.
 * @example
 * parseRecordsArgs(['--status', 'failed', '--older-than', '2h'], {}).olderThanMs // 7_200_000
 * parseRecordsArgs(['rejected'], { npm_lifecycle_event: 'records', npm_config_status: 'true' }) // throws: write npm run records -- --status <value>
 */
export const parseRecordsArgs = (argv: string[], env: NodeJS.ProcessEnv = process.env): RecordsOptions => {
  const { values, positionals } = parseCommandLine(
    argv,
    { values: VALUE_OPTIONS, flags: FLAG_OPTIONS, npmScript: 'records' },
    env,
  );
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

  const filters = (
    ['status', 'older-than', 'kind', 'client', 'dealer', 'frame', 'limit', 'mode'] as const
  ).filter((option) => values[option] !== undefined);
  if (values.trace !== undefined) {
    if (values.id !== undefined || filters.length > 0 || values.counts || values.stage !== undefined)
      throw new UsageError('--trace <recordId|traceId> stands alone: it reads the spans npm start kept');
    return { ...parseRecordsArgs([], env), mode: 'trace', trace: values.trace, json: values.json ?? false };
  }
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
