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
    [['--colour'], "Unknown option '--colour'"],
    [['--status'], "Option '--status <value>' argument missing"],
    [['--client', ''], '--client needs a value'],
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

  it('puts the value back when npm took --mode as its own: npm run records --mode test --status failed', () => {
    // Act
    const options = parseRecordsArgs(['failed', 'test'], npm({ mode: 'true', status: 'true' }));
    // Assess
    expect(options).toMatchObject({ clientMode: 'test', statuses: ['failed'] });
  });
});

describe('parseRecordsArgs, the form without -- (npm takes the options as its own settings)', () => {
  it('puts a value npm passed on as an argument back to its option: npm run records --status rejected', () => {
    // Prepare: what the script gets from `npm run records --status rejected`.
    const env = npm({ status: 'true' });
    // Act
    const options = parseRecordsArgs(['rejected'], env);
    // Assess
    expect(options).toMatchObject({ mode: 'list', statuses: ['rejected'] });
  });

  it('tells values apart by their look whatever order npm gives them in', () => {
    // `npm run records --older-than 2h --kind cases --status failed --region eu-central-1 --stage prod --json`
    const env = npm({
      older_than: 'true',
      kind: 'true',
      status: 'true',
      region: 'true',
      stage: 'true',
      json: 'true',
    });
    const options = parseRecordsArgs(['2h', 'cases', 'failed', 'eu-central-1', 'prod'], env);
    expect(options).toMatchObject({
      statuses: ['failed'],
      kinds: ['caseRecord'],
      olderThanMs: 7_200_000,
      region: 'eu-central-1',
      stage: 'prod',
      json: true,
    });
  });

  it('keeps values npm kept (--status=rejected) and switches (--counts, --show-personal)', () => {
    expect(parseRecordsArgs([], npm({ status: 'rejected', counts: 'true' }))).toMatchObject({
      mode: 'counts',
      statuses: ['rejected'],
    });
    expect(parseRecordsArgs(['3f0c'], npm({ show_personal: 'true' }))).toMatchObject({
      id: '3f0c',
      showPersonal: true,
    });
  });

  it('gives a number to the one numeric option and a name to the one other option that lost its value', () => {
    const options = parseRecordsArgs(
      ['example-dealer', '1234', 'failed'],
      npm({ dealer: 'true', client: 'true', status: 'true' }),
    );
    expect(options).toMatchObject({ client: 'example-dealer', dealer: 1234, statuses: ['failed'] });
    expect(parseRecordsArgs(['3f0c'], npm({ id: 'true' }))).toMatchObject({ mode: 'one', id: '3f0c' });
  });

  it('refuses what cannot be told apart, with the -- form to write instead', () => {
    expect(refused(['example-dealer', 'JH2X'], npm({ client: 'true', frame: 'true' }))).toBe(
      'npm took --client, --frame as settings of its own and passed their values on without their names, in an ' +
        'order it does not keep: write npm run records -- --client <value> --frame <value> (or --client=<value>)',
    );
    expect(refused(['5', '1234'], npm({ dealer: 'true', limit: 'true' }))).toContain('--dealer, --limit');
    expect(refused([], npm({ status: 'true' }))).toBe('--status needs a value');
    expect(refused(['lost'], npm({ status: 'true' }))).toContain('--status must be one of');
  });

  it('reads npm settings only when npm runs the records script (not those of an npm command around it)', () => {
    const options = parseRecordsArgs([], { npm_lifecycle_event: 'test', npm_config_json: 'true' });
    expect(options.json).toBe(false);
  });
});
