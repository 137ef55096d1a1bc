import { describe, expect, it } from 'vitest';
import { parseRecordsArgs } from '../../tools/records/args.ts';
import { UsageError } from '../../tools/records/errors.ts';

/** What npm puts in a script's environment for `npm run records <flags>` (npm 10 and 11, measured with 11.19). */
const npm = (settings: Record<string, string>) => ({
  npm_lifecycle_event: 'records',
  ...Object.fromEntries(Object.entries(settings).map(([name, value]) => [`npm_config_${name}`, value])),
});

const refused = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  try {
    parseRecordsArgs(argv, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
};

describe('parseRecordsArgs, the -- form', () => {
  it('lists every state of both kinds from the running npm start when told nothing', () => {
    // Act
    const options = parseRecordsArgs([], {});
    // Assess
    expect(options).toEqual({
      mode: 'list',
      statuses: ['accepted', 'delivered', 'rejected', 'failed'],
      kinds: ['salesRegistration', 'caseRecord'],
      json: false,
      region: 'eu-west-1',
      showPersonal: false,
      progress: false,
      help: false,
    });
  });

  it('reads every filter and switch', () => {
    const options = parseRecordsArgs(
      [
        '--status',
        'failed',
        '--older-than',
        '2h',
        '--kind',
        'sales',
        '--client',
        'example-dealer',
        '--dealer',
        '1234',
        '--frame',
        'JH2X',
        '--json',
        '--limit',
        '5',
        '--progress',
        '--stage',
        'prod',
        '--region',
        'eu-central-1',
      ],
      {},
    );
    expect(options).toEqual({
      mode: 'list',
      statuses: ['failed'],
      kinds: ['salesRegistration'],
      olderThanMs: 7_200_000,
      client: 'example-dealer',
      dealer: 1234,
      frame: 'JH2X',
      json: true,
      limit: 5,
      stage: 'prod',
      region: 'eu-central-1',
      showPersonal: false,
      progress: true,
      help: false,
    });
  });

  it('takes ages in minutes, hours and days, and both names of a kind', () => {
    expect(parseRecordsArgs(['--older-than', '30m'], {}).olderThanMs).toBe(1_800_000);
    expect(parseRecordsArgs(['--older-than', '3d'], {}).olderThanMs).toBe(259_200_000);
    expect(parseRecordsArgs(['--kind', 'cases'], {}).kinds).toEqual(['caseRecord']);
    expect(parseRecordsArgs(['--kind', 'caseRecord'], {}).kinds).toEqual(['caseRecord']);
  });

  it('shows one record by id, given as an argument or with --id, with --show-personal only there', () => {
    expect(parseRecordsArgs(['3f0c', '--show-personal'], {})).toMatchObject({
      mode: 'one',
      id: '3f0c',
      showPersonal: true,
    });
    expect(parseRecordsArgs(['--id', '3f0c', '--json'], {})).toMatchObject({
      mode: 'one',
      id: '3f0c',
      json: true,
    });
  });

  it('counts with --counts, narrowed like a listing', () => {
    expect(parseRecordsArgs(['--counts', '--client', 'a', '--older-than', '1h'], {})).toMatchObject({
      mode: 'counts',
      client: 'a',
      olderThanMs: 3_600_000,
    });
  });

  it.each([
    [['--status', 'lost'], '--status must be one of accepted, delivered, rejected, failed, not "lost"'],
    [['--kind', 'bikes'], '--kind must be sales or cases, not "bikes"'],
    [['--older-than', '30'], '--older-than must be minutes, hours or days (30m, 2h, 3d), not "30"'],
    [['--older-than', '1w'], '--older-than must be minutes, hours or days (30m, 2h, 3d), not "1w"'],
    [['--dealer', '12a'], '--dealer must be a whole number of at least 1, not "12a"'],
    [['--limit', '0'], '--limit must be a whole number of at least 1, not "0"'],
    [['--region', 'eu-west-1'], '--region goes with --stage'],
    [['--show-personal'], '--show-personal goes with one record by id'],
    [['3f0c', '--status', 'failed'], 'one record by id takes no filters (--status)'],
    [
      ['--counts', '--frame', 'X'],
      '--counts counts by state per kind: it does not combine with --frame or --limit',
    ],
    [['a', 'b'], 'unexpected arguments: a b'],
    [['--colour'], 'unknown option --colour'],
    [['--status'], '--status needs a value'],
    [['--client', ''], '--client needs a value'],
    [['--stage', '--region', 'eu-west-1'], '--stage needs a value'],
    [['--json=yes'], '--json takes no value'],
  ])('refuses %j: %s', (argv, message) => {
    expect(refused(argv)).toContain(message);
  });
});

describe('parseRecordsArgs, --mode', () => {
  it('reads test or live, a filter that one record by id refuses', () => {
    // Act
    const test = parseRecordsArgs(['--mode', 'test'], {});
    const live = parseRecordsArgs(['--counts', '--mode', 'live'], {});
    // Assess
    expect(test.clientMode).toBe('test');
    expect(live).toMatchObject({ mode: 'counts', clientMode: 'live' });
    expect(parseRecordsArgs([], {}).clientMode).toBeUndefined();
    expect(refused(['--mode', 'Test'])).toBe('--mode must be test or live, not "Test"');
    expect(refused(['0123456789abcdef0123456789abcdef', '--mode', 'test'])).toMatch(
      /one record by id takes no filters \(--mode\)/,
    );
  });
});

describe('parseRecordsArgs, the form without -- (npm takes the options as its own settings)', () => {
  it('refuses it, naming the options npm took and the -- form to write instead', () => {
    // Prepare: what the script gets from `npm run records --status rejected --json` and `npm run records --mode test`.
    const statusAndJson = npm({ status: 'true', json: 'true' });
    const mode = npm({ mode: 'true' });
    // Act, Assess
    expect(refused(['rejected'], statusAndJson)).toBe(
      'npm took --status, --json for its own settings: write npm run records -- --status <value> --json ' +
        '(the -- hands them to the tool)',
    );
    expect(refused(['test'], mode)).toBe(
      'npm took --mode for its own setting: write npm run records -- --mode <value> (the -- hands them to the tool)',
    );
    // A value npm kept (`--status=rejected`) is refused the same way: the tool reads arguments only.
    expect(refused([], npm({ status: 'rejected' }))).toContain('write npm run records -- --status <value>');
  });

  it('reads npm settings only when npm runs the records script (not those of an npm command around it)', () => {
    const options = parseRecordsArgs([], { npm_lifecycle_event: 'test', npm_config_json: 'true' });
    expect(options.json).toBe(false);
  });
});
