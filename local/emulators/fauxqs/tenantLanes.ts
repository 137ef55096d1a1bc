/**
 * The order an SQS fair queue serves its ready messages in, for the local queue (local/emulators/fauxqs/fairQueue.ts puts it inside
 * fauxqs). As AWS documents fair queues: a message's tenant is its MessageGroupId, and each message without one is
 * a tenant of its own; a tenant is a noisy neighbour while it holds more than 10% of the messages in flight and at
 * least 30 of them; a receive is served the oldest message of the quiet tenants first, and a noisy tenant's only
 * when no quiet one waits (the noisy tenant with the fewest in flight first). Not modelled: the processing-time
 * share (it needs the consumer's timings) and the 5 minutes after which a tenant that stopped sending is quiet again
 * (here, as soon as its in-flight share falls).
 */

/** A message as the queue keeps it: only its tenant matters here. */
export interface TenantMessage {
  messageGroupId?: string;
}

/** Noisy: more than this share of the messages in flight... */
export const NOISY_SHARE = 0.1;
/** ...and at least this many of them. */
export const NOISY_AT_LEAST = 30;

/** In-flight messages by tenant, as the queue counts them. */
export interface InFlightCounts {
  /** Messages in flight in all. */
  total(): number;
  /** Messages of this tenant in flight. */
  of(tenant: string): number;
}

/** One tenant's ready messages, oldest first, each with the order it became ready in. */
class Lane<M> {
  private items: { message: M; ready: number }[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(message: M, ready: number): void {
    this.items.push({ message, ready });
  }

  /** When its oldest message became ready (Infinity when empty). */
  oldest(): number {
    return this.items[this.head]?.ready ?? Number.POSITIVE_INFINITY;
  }

  shift(): M | undefined {
    const item = this.items[this.head];
    if (!item) return undefined;
    this.head++;
    // Drop the taken front now and then, so a long backlog does not keep what was served.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item.message;
  }

  *[Symbol.iterator](): Generator<{ message: M; ready: number }> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i];
  }
}

/**
 * The ready messages of one standard queue, by tenant. It stands where fauxqs keeps its array of ready messages and
 * offers what fauxqs uses of it (`push`, `shift`, `length`, iteration), so the queue's own receive, visibility and
 * dead-letter handling stay as they are; only the order `shift` answers in changes.
 *
 * @example
 * const lanes = new TenantLanes(inFlightCounts);
 * lanes.push({ messageGroupId: 'flooding-dealer' }); // ... 10,000 of them, 200 in flight
 * lanes.push({ messageGroupId: 'quiet-dealer' });
 * lanes.shift(); // the quiet dealer's message
 */
export class TenantLanes<M extends TenantMessage> {
  private readonly lanes = new Map<string, Lane<M>>();
  /** Messages without a group id: each its own tenant, never noisy (one in flight at most), so one lane in order. */
  private readonly ungrouped = new Lane<M>();
  private count = 0;
  private readyOrder = 0;

  private readonly inFlight: InFlightCounts;

  constructor(inFlight: InFlightCounts) {
    this.inFlight = inFlight;
  }

  get length(): number {
    return this.count;
  }

  /** A message becomes ready (sent, its delay or visibility over): last of its tenant's. */
  push(...messages: M[]): number {
    for (const message of messages) {
      const tenant = message.messageGroupId;
      let lane = this.ungrouped;
      if (tenant !== undefined) {
        lane = this.lanes.get(tenant) ?? new Lane<M>();
        this.lanes.set(tenant, lane);
      }
      lane.push(message, this.readyOrder++);
      this.count++;
    }
    return this.count;
  }

  /** The next message a receive is served: the oldest of a quiet tenant, else the least busy noisy tenant's. */
  shift(): M | undefined {
    if (this.count === 0) return undefined;
    const total = this.inFlight.total();
    let quiet: Lane<M> | undefined = this.ungrouped.length > 0 ? this.ungrouped : undefined;
    let noisy: { lane: Lane<M>; inFlight: number } | undefined;
    for (const [tenant, lane] of this.lanes) {
      if (lane.length === 0) {
        this.lanes.delete(tenant);
        continue;
      }
      const inFlight = this.inFlight.of(tenant);
      const isNoisy = inFlight >= NOISY_AT_LEAST && inFlight > NOISY_SHARE * total;
      if (!isNoisy) {
        if (!quiet || lane.oldest() < quiet.oldest()) quiet = lane;
      } else if (
        !noisy ||
        inFlight < noisy.inFlight ||
        (inFlight === noisy.inFlight && lane.oldest() < noisy.lane.oldest())
      )
        noisy = { lane, inFlight };
    }
    const message = (quiet ?? noisy?.lane)?.shift();
    if (message !== undefined) this.count--;
    return message;
  }

  /** Every ready message (fauxqs lists them for its inspection page; no receive reads this order). */
  *[Symbol.iterator](): Generator<M> {
    for (const item of this.ungrouped) yield item.message;
    for (const lane of this.lanes.values()) for (const item of lane) yield item.message;
  }
}
