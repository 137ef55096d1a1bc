/**
 * The arguments of `npm run redrive -- erp|crm [--stage <stage>] [--region <region>]` (scripts/redrive.ts), read
 * before anything is looked at: a mistake is refused with exit code 2, never taken for a redrive of something else.
 */
import type { RecordKind } from '../../lib/types.ts';
import { parseCommandLine, UsageError } from '../cli/commandLine.ts';

export const USAGE = 'usage: npm run redrive -- erp|crm [--stage <stage>] [--region <region>]';

/** What `npm run redrive` was asked to do. */
export interface RedriveOptions {
  /** The queue named: `erp` (sales registrations) or `crm` (cases). */
  target: 'erp' | 'crm';
  kind: RecordKind;
  /** An AWS stage; the running `npm start` when absent. */
  stage?: string;
  region?: string;
}

/**
 * Reads the command line: one queue, `erp` or `crm` (one at a time: `erp crm` is refused, not read as `erp`), and
 * `--region` only with `--stage`.
 *
 * @throws UsageError naming the argument at fault.
 * @example
 * parseRedriveArgs(['crm', '--stage', 'prod'], {}) // { target: 'crm', kind: 'caseRecord', stage: 'prod' }
 * parseRedriveArgs(['erp', 'crm'], {}) // throws: one queue at a time
 */
export const parseRedriveArgs = (argv: readonly string[], env: NodeJS.ProcessEnv): RedriveOptions => {
  const { values, positionals } = parseCommandLine(
    argv,
    { values: ['stage', 'region'], npmScript: 'redrive' },
    env,
  );
  const [target, ...more] = positionals;
  if (target === undefined) throw new UsageError('which queue: erp or crm');
  if (target !== 'erp' && target !== 'crm')
    throw new UsageError(`the queue must be erp or crm, not "${target}"`);
  if (more.length > 0)
    throw new UsageError(
      `one queue at a time: ${target}, then run it again for the next (unexpected: ${more.join(' ')})`,
    );
  if (values.region !== undefined && values.stage === undefined)
    throw new UsageError('--region goes with --stage (without --stage, the running npm start is redriven)');
  return {
    target,
    kind: target === 'erp' ? 'salesRegistration' : 'caseRecord',
    ...(values.stage === undefined ? {} : { stage: values.stage }),
    ...(values.region === undefined ? {} : { region: values.region }),
  };
};
