/**
 * The local poller's check of the downstream holds (docs/behaviour.md#outages-and-holds): while a downstream is held,
 * its queue's poller receives at most one batch per probe period instead of spinning through the backlog (the
 * worker would only hand each message back). On AWS the event source keeps polling and the worker's long
 * visibility does this; locally the poller need not pay for it.
 */
import { holdStates } from '../lib/outage/hold.ts';
import type { Downstream, HoldState } from '../lib/outage/types.ts';
import { type PollClock, type ReceiveGate, systemClock } from './sqsBatch.ts';

/** Both downstreams' holds, read as `holdStates()` reads them. */
export type HoldReader = () => Promise<Record<Downstream, HoldState>>;

/**
 * Reads both holds at most once per `cacheMs` (one BatchGetItem), however many pollers ask.
 *
 * @example
 * const states = cachedHoldStates(5000);
 * const { erp } = await states();
 */
export const cachedHoldStates = (
  cacheMs: number,
  read: HoldReader = () => holdStates(),
  clock: PollClock = systemClock,
): HoldReader => {
  let last: { at: number; states: Promise<Record<Downstream, HoldState>> } | undefined;
  return () => {
    const now = clock.now();
    if (!last || now - last.at >= cacheMs || now < last.at) {
      const states = read();
      last = { at: now, states };
      // A failed read is not kept: the next ask reads again.
      states.catch(() => {
        if (last?.states === states) last = undefined;
      });
    }
    return last.states;
  };
};

/**
 * The gate of one downstream's poller: go on while it is not held; while held, one batch per probe period (and
 * not before the hold's next probe may start), else how long to wait. `held()` says whether the last ask found
 * the downstream held, so that the poller sends that batch alone (local/batchSlots.ts).
 *
 * @example
 * startPoller({ ...options, gate: holdGate({ downstream: 'erp', probeSeconds: 30, states: cachedHoldStates(5000) }) });
 */
export const holdGate = (options: {
  downstream: Downstream;
  probeSeconds: number;
  states: HoldReader;
  clock?: PollClock;
}): ReceiveGate => {
  const clock = options.clock ?? systemClock;
  const periodMs = options.probeSeconds * 1000;
  let lastHeldReceive: number | undefined;
  let held = false;
  const ask = async () => {
    const state = (await options.states())[options.downstream];
    const now = clock.now();
    held = state.held;
    if (!state.held) {
      lastHeldReceive = undefined;
      return 0;
    }
    const probeAt = state.nextProbeAt ? Date.parse(state.nextProbeAt) : now;
    const next = Math.max(lastHeldReceive === undefined ? now : lastHeldReceive + periodMs, probeAt);
    if (next > now) return next - now;
    lastHeldReceive = now;
    return 0;
  };
  return Object.assign(ask, { held: () => held });
};
