/**
 * CPU profiles of benchmark blocks, for finding out why a figure misses its target.
 *
 * In a benchmark child, `BENCH_PROFILE=<side>:<file>` (e.g. `ours:/tmp/worker`) profiles the measured blocks of
 * that side and writes `<file>-<n>.cpuprofile` (open them in Chrome DevTools). `node bench/profile.ts <files…>`
 * prints where their CPU time went: self time by package / project file, and the hottest functions.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export const cpuProfiler = async (setting = process.env.BENCH_PROFILE) => {
  if (!setting) return undefined;
  const [side, file] = setting.split(':');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  const profiles: CpuProfile[] = [];
  return {
    side,
    start: () => session.post('Profiler.start'),
    pause: async () => {
      profiles.push((await session.post('Profiler.stop')).profile as unknown as CpuProfile);
    },
    save: async () => {
      await Promise.all(profiles.map((p, i) => writeFile(`${file}-${i + 1}.cpuprofile`, JSON.stringify(p))));
      session.disconnect();
    },
  };
};

/** Where a frame's code lives: a package of node_modules, a project file, a Node built-in, or V8 itself. */
const ownerOf = (url: string): string => {
  if (!url) return '(v8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  if (url.startsWith('file://'))
    return fileURLToPath(url).replace(/^.*?\/(lib|functions|scripts|bench|tests)\//, '$1/');
  return url;
};

/** Self time (ms) by owner and by function, over several profiles. */
export const summarise = (profiles: CpuProfile[]) => {
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const profile of profiles) {
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    profile.samples.forEach((id, i) => {
      const ms = (profile.timeDeltas[i] ?? 0) / 1000;
      const frame = (nodes.get(id) as ProfileNode).callFrame;
      // Idle, and the profiler's own start/stop round trips.
      if (frame.functionName === '(idle)' || frame.url === 'node:inspector') return;
      total += ms;
      const owner = ownerOf(frame.url);
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + ms);
      const fn = `${frame.functionName || '(anonymous)'} ${owner}:${frame.lineNumber + 1}`;
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    });
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { totalMs: total, owners: top(byOwner, 25), functions: top(byFunction, 30) };
};

if (import.meta.main) {
  const { readFile } = await import('node:fs/promises');
  const profiles = await Promise.all(
    process.argv.slice(2).map(async (f) => JSON.parse(await readFile(f, 'utf8')) as CpuProfile),
  );
  const { totalMs, owners, functions } = summarise(profiles);
  const line = ([name, ms]: [string, number]) =>
    `${ms.toFixed(1).padStart(9)} ms ${((100 * ms) / totalMs).toFixed(1).padStart(5)} %  ${name}`;
  console.log(`busy ${totalMs.toFixed(0)} ms\n\nself time by code owner:`);
  console.log(owners.map(line).join('\n'));
  console.log('\nhottest functions (self time):');
  console.log(functions.map(line).join('\n'));
}
