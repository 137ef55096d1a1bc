/**
 * The budget of an intake request's AWS calls: the invocation's remaining time less the 1.5 s kept to answer, never
 * less than 0.5 s; 10 s (the intake functions' timeout) less the reserve without a Lambda context.
 */
import { describe, expect, it } from 'vitest';
import { intakeDeadline } from '../../lib/intake/deadline.ts';

/** Milliseconds until the signal aborts (it must abort within `withinMs`), and the reason it gives. */
const abortsAfter = (signal: AbortSignal, withinMs: number) =>
  new Promise<{ ms: number; reason: unknown }>((resolve, reject) => {
    const started = performance.now();
    const late = setTimeout(() => reject(new Error(`not aborted within ${withinMs} ms`)), withinMs);
    signal.addEventListener('abort', () => {
      clearTimeout(late);
      resolve({ ms: performance.now() - started, reason: signal.reason });
    });
  });

describe('intakeDeadline', () => {
  it('gives the remaining time less 1.5 s', async () => {
    const { ms, reason } = await abortsAfter(
      intakeDeadline({ getRemainingTimeInMillis: () => 2_300 }),
      2_000,
    );
    expect(ms).toBeGreaterThanOrEqual(750);
    expect(reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('never gives less than 0.5 s, however little time is left', async () => {
    const { ms } = await abortsAfter(intakeDeadline({ getRemainingTimeInMillis: () => 1_600 }), 2_000);
    expect(ms).toBeGreaterThanOrEqual(450);
  });

  it('without a Lambda context, or one that cannot tell its time, gives 8.5 s', async () => {
    const signals = [undefined, {} as Parameters<typeof intakeDeadline>[0]].map(intakeDeadline);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
  });
});
