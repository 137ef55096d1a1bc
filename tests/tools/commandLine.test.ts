import { describe, expect, it } from 'vitest';
import { parseCommandLine, UsageError } from '../../tools/cli/commandLine.ts';

const REDRIVE = { values: ['stage', 'region'], flags: ['json'], npmScript: 'redrive' } as const;

const refusal = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    parseCommandLine(argv, REDRIVE, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

describe('parseCommandLine, the operators’ command lines', () => {
  it('reads values written apart or inline, switches, and everything after -- as arguments', () => {
    // Act
    const apart = parseCommandLine(['erp', '--stage', 'prod', '--json'], REDRIVE, {});
    const inline = parseCommandLine(['--stage=-odd', '--', '--region', 'x'], REDRIVE, {});
    // Assess
    expect(apart).toEqual({ values: { stage: 'prod', json: true }, positionals: ['erp'] });
    expect(inline).toEqual({ values: { stage: '-odd' }, positionals: ['--region', 'x'] });
  });

  it.each([
    [['--dealer', '1234'], 'unknown option --dealer'],
    [['-s', 'prod'], 'unknown option -s'],
    [['--stage'], '--stage needs a value'],
    [['--stage='], '--stage needs a value'],
    [['--stage', '--region', 'eu-west-1'], '--stage needs a value'],
    [['--json=yes'], '--json takes no value'],
  ])('refuses %j: %s', (argv, message) => {
    expect(refusal(argv)).toBe(message);
  });

  it('refuses what npm took for its own settings, only when npm runs that script', () => {
    // Prepare: `npm run redrive erp --stage prod`, and the same setting seen by another script.
    const taken = { npm_lifecycle_event: 'redrive', npm_config_stage: 'true' };
    const elsewhere = { npm_lifecycle_event: 'test', npm_config_stage: 'true' };
    // Act / Assess
    expect(refusal(['erp', 'prod'], taken)).toBe(
      'npm took --stage for its own setting: write npm run redrive -- --stage <value> (the -- hands them to the tool)',
    );
    expect(parseCommandLine(['erp'], REDRIVE, elsewhere).positionals).toEqual(['erp']);
  });
});
