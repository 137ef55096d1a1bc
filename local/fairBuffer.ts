/**
 * The local stand-in for SQS fair queues (fauxqs serves a standard queue first in, first out): messages the poller
 * has received but not yet handed to the worker, kept by tenant (the client, the message's group id), so that each
 * batch is filled round-robin across the clients waiting and one client's backlog cannot hold up another's record.
 * Each message is kept once (by message id), oldest first within its client.
 */
import type { Message } from '@aws-sdk/client-sqs';

/** A received message, the client it belongs to, and when this poller received it. */
export interface BufferedMessage {
  message: Message;
  tenant: string;
  receivedAt: number;
}

/**
 * The tenant of a message: its MessageGroupId as SQS reports it, else the `owner` its body names (fauxqs keeps no
 * group id on a standard queue), else '' (one shared tenant for messages that name no client).
 *
 * @example
 * tenantOf({ Body: '{"id":"r1","kind":"caseRecord","requestId":"q","owner":"example-dealer"}' }) // 'example-dealer'
 */
export const tenantOf = (message: Message): string => {
  const group = message.Attributes?.MessageGroupId;
  if (group) return group;
  try {
    const owner = (JSON.parse(message.Body ?? '') as { owner?: unknown } | null)?.owner;
    return typeof owner === 'string' ? owner : '';
  } catch {
    return '';
  }
};

/**
 * Received messages by tenant; {@link FairBuffer.takeBatch} fills a batch round-robin across tenants, starting
 * after the tenant the last batch ended with.
 *
 * @example
 * const buffer = new FairBuffer();
 * buffer.add(messages, Date.now());
 * const batch = buffer.takeBatch(200); // one of each client in turn until 200 or none left
 */
export class FairBuffer {
  private readonly byTenant = new Map<string, BufferedMessage[]>();
  private readonly byId = new Map<string, BufferedMessage>();
  /** Tenants in the order they are served; the next batch starts at `next`. */
  private order: string[] = [];
  private next = 0;

  /** Messages held. */
  get size(): number {
    return this.byId.size;
  }

  /** When the longest-held message was received (undefined when empty). */
  oldestReceivedAt(): number | undefined {
    // Each tenant's messages are kept in the order received: its first is its oldest.
    let oldest: number | undefined;
    for (const queue of this.byTenant.values()) {
      const first = queue[0]?.receivedAt;
      if (first !== undefined && (oldest === undefined || first < oldest)) oldest = first;
    }
    return oldest;
  }

  /**
   * Keeps received messages. A message already held (received again, its visibility having ended) keeps its
   * place and first receive time, and takes the newest receipt handle, the only one SQS still honours: it is never
   * held twice.
   */
  add(messages: readonly Message[], receivedAt: number): void {
    for (const message of messages) {
      const id = message.MessageId ?? '';
      const held = this.byId.get(id);
      if (held) {
        held.message = message;
        continue;
      }
      const entry: BufferedMessage = { message, tenant: tenantOf(message), receivedAt };
      this.byId.set(id, entry);
      let queue = this.byTenant.get(entry.tenant);
      if (!queue) {
        queue = [];
        this.byTenant.set(entry.tenant, queue);
        this.order.push(entry.tenant);
      }
      queue.push(entry);
    }
  }

  /**
   * Takes up to `size` messages: one from each tenant in turn, each tenant's oldest first, until the batch is full
   * or nothing is left; the next batch starts with the tenant after the last one served.
   */
  takeBatch(size: number): Message[] {
    const batch: Message[] = [];
    let index = this.order.length === 0 ? 0 : this.next % this.order.length;
    let idle = 0;
    while (batch.length < size && this.byId.size > 0 && idle < this.order.length) {
      const queue = this.byTenant.get(this.order[index]);
      const entry = queue?.shift();
      if (entry) {
        batch.push(entry.message);
        this.byId.delete(entry.message.MessageId ?? '');
        idle = 0;
      } else idle++;
      index = (index + 1) % this.order.length;
    }
    // Tenants with nothing left are forgotten, the turn kept on the tenant after the last served.
    const nextTenant = this.order[index];
    this.order = this.order.filter((tenant) => (this.byTenant.get(tenant)?.length ?? 0) > 0);
    for (const [tenant, queue] of this.byTenant) if (queue.length === 0) this.byTenant.delete(tenant);
    const at = this.order.indexOf(nextTenant);
    this.next = Math.max(at, 0);
    return batch;
  }

  /** The messages held, with their latest receipt handles. */
  held(): Message[] {
    return [...this.byId.values()].map((entry) => entry.message);
  }

  /** Forgets one message (its visibility could not be extended: it is the queue's again). */
  drop(messageId: string): void {
    const entry = this.byId.get(messageId);
    if (!entry) return;
    this.byId.delete(messageId);
    const queue = this.byTenant.get(entry.tenant) ?? [];
    const at = queue.indexOf(entry);
    if (at >= 0) queue.splice(at, 1);
  }

  /** Takes every message held (to hand back to the queue when the poller stops). */
  takeAll(): Message[] {
    const all = [...this.byId.values()].map((entry) => entry.message);
    this.byId.clear();
    this.byTenant.clear();
    this.order = [];
    this.next = 0;
    return all;
  }
}
