/**
 * How busy the machine was with work other than the benchmarks: the CPU time all cores spent busy, minus
 * what this process and its (finished) children used. Linux (/proc); elsewhere the figure is unknown.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface Snapshot {
  at: number;
  /** ms all cores spent busy since boot. */
  machineBusyMs: number;
  /** ms this process and its waited-for children spent on CPU; undefined without /proc. */
  oursMs?: number;
}

const ownAndChildrenMs = (): number | undefined => {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after "(comm)": state is field 3; utime 14, stime 15, cutime 16, cstime 17 (1-based).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return (ticks / TICKS_PER_SECOND) * 1000;
  } catch {
    return undefined;
  }
};

export const snapshot = (): Snapshot => ({
  at: performance.now(),
  machineBusyMs: cpus().reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0),
  oursMs: ownAndChildrenMs(),
});

/** Cores' worth of CPU that other work used between two snapshots (undefined when unknown). */
export const othersCores = (from: Snapshot, to: Snapshot): number | undefined => {
  if (from.oursMs === undefined || to.oursMs === undefined) return undefined;
  const others = to.machineBusyMs - from.machineBusyMs - (to.oursMs - from.oursMs);
  return Math.max(0, others / (to.at - from.at));
};
