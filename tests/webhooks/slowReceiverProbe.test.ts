/**
 * How often a timing-out receiver is probed (lib/webhooks/slowReceivers.ts): once per first retry window, never more
 * often than once per ten try limits, so that a probe holds an invocation a tenth of the time at most.
 */
import { describe, expect, it } from 'vitest';
import { ATTEMPT_TIMEOUT_MS } from '../../lib/webhooks/attempt.ts';
import { WEBHOOK_RETRY_SCHEDULE } from '../../lib/webhooks/retrySchedule.ts';
import { slowReceiverProbeMs } from '../../lib/webhooks/slowReceivers.ts';

describe('the probe period of a timing-out receiver', () => {
  it('is the first retry window on AWS (a minute)', () => {
    expect(slowReceiverProbeMs(WEBHOOK_RETRY_SCHEDULE.baseMs, ATTEMPT_TIMEOUT_MS)).toBe(60_000);
  });

  it('is ten try limits under npm start, whose first retry window is a second', () => {
    expect(slowReceiverProbeMs(1_000, ATTEMPT_TIMEOUT_MS)).toBe(50_000);
  });
});
