/**
 * The soak's picture of a sandbox's queued faults (soak/faultQueue.ts): faults are taken one per request of their
 * kind, in order; a fault that fails a whole call waits alone, and the next may be planted only after a delivery
 * call that met none, so the downstream answers between any two (no run of failures the hold would take for an
 * outage). Negative control: planted back to back, they would be refused.
 */
import { describe, expect, it } from 'vitest';
import { createFaultQueue } from '../../soak/faultQueue.ts';

describe('the soak fault queue', () => {
  it('allows a whole-call failure at the start, then none until a call met no failure', () => {
    // Prepare
    const queue = createFaultQueue();
    // Act / Assess
    expect(queue.mayFailCall()).toBe(true);
    queue.planted('single', true);
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('batched'); // another kind: the failure still waits for a single call
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('single'); // took it: that call failed
    expect(queue.waiting()).toBe(0);
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('fetch'); // a token fetch answers no delivery
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('single'); // a delivery call that met no failure
    expect(queue.mayFailCall()).toBe(true);
  });

  it('follows faults in order per kind: a failure behind an answer is taken by the second call', () => {
    // Prepare
    const queue = createFaultQueue();
    queue.planted('batched', false); // e.g. one record refused inside an answered call
    queue.planted('batched', true);
    // Act
    queue.observe('batched');
    // Assess
    expect(queue.waiting('batched')).toBe(1);
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('batched');
    queue.observe('single');
    expect(queue.mayFailCall()).toBe(true);
  });

  it('counts a failed token fetch as a failed call', () => {
    // Prepare
    const queue = createFaultQueue();
    queue.planted('fetch', true);
    // Act
    queue.observe('fetch');
    // Assess
    expect(queue.mayFailCall()).toBe(false);
    queue.observe('batched');
    expect(queue.mayFailCall()).toBe(true);
  });

  it('answers faults that fail no call are planted freely', () => {
    // Prepare
    const queue = createFaultQueue();
    // Act
    queue.planted('single', false);
    queue.planted('batched', false);
    // Assess
    expect(queue.mayFailCall()).toBe(true);
    expect(queue.waiting()).toBe(2);
  });
});
