/**
 * The webhook receivers that are timing out, as one dispatcher instance sees them. A try that runs into its time
 * limit holds its invocation, and with it one of the dispatcher's few concurrent invocations, for that limit; a
 * client whose receiver answers late would otherwise fill them all, and another client's event would wait for one
 * to end (docs/design.md, "Events and webhooks": one client's slow receiver). So while a client's receiver is timing out, one
 * try at a time, at most one per `probeIntervalMs`, goes to it (the probe); its other events are held back without
 * a call, each as a failed try (hidden until its next retry window, lib/webhooks/dispatch.ts). Those tries would
 * have timed out too as far as the last probe tells, so the client loses nothing that its receiver could take. Any
 * answer in time, whatever its status, ends it: a receiver that answers at once holds no invocation long.
 */

/** What a try of a client's webhook may do now. */
export type TryPermit = 'try' | 'probe' | 'holdBack';

export interface SlowReceivers {
  /** Whether a try of `client`'s webhook goes out now (`probe`: the one try its timing-out receiver gets). */
  admit(client: string): TryPermit;
  /** A try admitted as `try` or `probe` ended: `timedOut` when it ran into its time limit. */
  settled(client: string, permit: Exclude<TryPermit, 'holdBack'>, timedOut: boolean): void;
  /** The clients whose receivers are timing out (for logs and tests). */
  slow(): string[];
}

interface Slow {
  /** When the last probe went out (or the receiver was first seen timing out). */
  probeAt: number;
  probing: boolean;
}

/**
 * Creates the guard of one dispatcher instance.
 *
 * @example
 * const receivers = slowReceivers({ probeIntervalMs: 60_000 });
 * receivers.settled('example-dealer', 'try', true); // a try ran into its time limit
 * receivers.admit('example-dealer'); // 'holdBack' for the next minute, then one 'probe'
 */
export const slowReceivers = (options: { probeIntervalMs: number; now?: () => number }): SlowReceivers => {
  const now = options.now ?? Date.now;
  const timingOut = new Map<string, Slow>();
  return {
    admit(client) {
      const slow = timingOut.get(client);
      if (!slow) return 'try';
      if (slow.probing || now() - slow.probeAt < options.probeIntervalMs) return 'holdBack';
      slow.probing = true;
      slow.probeAt = now();
      return 'probe';
    },
    settled(client, permit, timedOut) {
      const slow = timingOut.get(client);
      if (!timedOut) {
        timingOut.delete(client);
        return;
      }
      if (!slow) timingOut.set(client, { probeAt: now(), probing: false });
      else if (permit === 'probe') slow.probing = false;
    },
    slow: () => [...timingOut.keys()],
  };
};

/** A probe holds an invocation for up to a try's time limit: it goes out at most once per this many of them. */
const TRY_LIMITS_PER_PROBE = 10;

/**
 * How often a timing-out receiver is probed: once per first retry window (as often as a failed event is tried
 * again: a minute on AWS), and never more often than once per ten try limits, so that a probe holds one invocation a
 * tenth of the time at most. Under `npm start`, whose first retry window is a second, a probe a second would hold
 * an invocation of each instance nearly all the time.
 *
 * @example
 * slowReceiverProbeMs(60_000, 5_000) // 60_000 on AWS
 * slowReceiverProbeMs(1_000, 5_000) // 50_000 under npm start
 */
export const slowReceiverProbeMs = (firstRetryWindowMs: number, tryLimitMs: number): number =>
  Math.max(firstRetryWindowMs, TRY_LIMITS_PER_PROBE * tryLimitMs);
