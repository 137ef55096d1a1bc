/**
 * SQS fair queues for the local queue. On AWS a standard queue is fair as soon as its messages carry a
 * MessageGroupId (the tenant: here the record's client): a tenant holding more than its share of the messages in
 * flight is served after the others until its backlog drains. fauxqs 2.4 keeps no group id on a standard queue and
 * serves it first in, first out, so `makeQueueFair` changes two things inside it, and nothing else:
 *
 * - a message sent to a standard queue keeps the MessageGroupId its send named (and a receive reports it, as on
 *   AWS);
 * - the queue's ready messages are kept by tenant (local/emulators/fauxqs/tenantLanes.ts), so a receive is served as a fair queue
 *   serves it; the queue's own receive, visibility, deletion and dead-letter handling are fauxqs's, unchanged.
 *
 * Messages sent without a group id are served first in, first out, as on AWS (each is a tenant of its own).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SqsRouter } from '../../../node_modules/fauxqs/dist/sqs/sqsRouter.js';
import type { SqsQueue } from '../../../node_modules/fauxqs/dist/sqs/sqsStore.js';
import type { InflightEntry, SqsMessage } from '../../../node_modules/fauxqs/dist/sqs/sqsTypes.js';
import { type InFlightCounts, TenantLanes } from './tenantLanes.ts';

/** The send being handled: fauxqs's send actions run to the end without yielding, so one at a time. */
let sending: { groupId?: string; entries: { body: string; groupId?: string }[]; next: number } | undefined;

interface SendBody {
  MessageBody?: unknown;
  MessageGroupId?: unknown;
  Entries?: { MessageBody?: unknown; MessageGroupId?: unknown }[];
}

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The group id the send being handled named for a message with this body (entries are enqueued in order). */
const sentGroupId = (body: string): string | undefined => {
  if (!sending) return undefined;
  if (sending.entries.length === 0) return sending.groupId;
  for (let i = sending.next; i < sending.entries.length; i++)
    if (sending.entries[i].body === body) {
      sending.next = i + 1;
      return sending.entries[i].groupId;
    }
  return undefined;
};

let routerPatched = false;

/** Makes fauxqs's router note each send's group ids while the send's action runs. */
const keepSentGroupIds = () => {
  if (routerPatched) return;
  const handle = SqsRouter.prototype.handle;
  if (typeof handle !== 'function') throw new Error(fauxqsChanged('SqsRouter.handle'));
  SqsRouter.prototype.handle = function (this: SqsRouter, request: FastifyRequest, reply: FastifyReply) {
    const target = String(request.headers['x-amz-target'] ?? '');
    if (target === 'AmazonSQS.SendMessage' || target === 'AmazonSQS.SendMessageBatch') {
      const body = (request.body ?? {}) as SendBody;
      sending = {
        groupId: text(body.MessageGroupId),
        entries: (Array.isArray(body.Entries) ? body.Entries : []).map((entry) => ({
          body: text(entry?.MessageBody) ?? '',
          groupId: text(entry?.MessageGroupId),
        })),
        next: 0,
      };
    }
    try {
      // The action runs (and enqueues) before this returns: only its answer is awaited.
      return handle.call(this, request, reply);
    } finally {
      sending = undefined;
    }
  };
  routerPatched = true;
};

const fauxqsChanged = (what: string) =>
  `fauxqs changed: ${what} is not as local/emulators/fauxqs/fairQueue.ts expects (written for fauxqs 2.4); fair queues are not available`;

/** The queue's in-flight messages, counted by tenant as they come and go. */
class InFlightByTenant extends Map<string, InflightEntry> implements InFlightCounts {
  private readonly byTenant = new Map<string, number>();

  private count(entry: InflightEntry | undefined, step: 1 | -1) {
    const tenant = entry?.message.messageGroupId;
    if (tenant === undefined) return;
    const now = (this.byTenant.get(tenant) ?? 0) + step;
    if (now > 0) this.byTenant.set(tenant, now);
    else this.byTenant.delete(tenant);
  }

  override set(key: string, entry: InflightEntry): this {
    // Map's constructor calls set before this class's fields exist; it is only ever given no entries.
    this.count(this.get(key), -1);
    this.count(entry, 1);
    return super.set(key, entry);
  }

  override delete(key: string): boolean {
    this.count(this.get(key), -1);
    return super.delete(key);
  }

  override clear(): void {
    this.byTenant.clear();
    super.clear();
  }

  total(): number {
    return this.size;
  }

  of(tenant: string): number {
    return this.byTenant.get(tenant) ?? 0;
  }
}

/**
 * Turns a fauxqs standard queue, just created and still empty, into a fair queue. A FIFO queue is left as it is.
 *
 * @example
 * const created = sqsStore.createQueue.bind(sqsStore);
 * sqsStore.createQueue = (...args) => makeQueueFair(created(...args));
 */
export const makeQueueFair = (queue: SqsQueue): SqsQueue => {
  if (queue.isFifo()) return queue;
  keepSentGroupIds();
  if (!Array.isArray(queue.messages) || !(queue.inflightMessages instanceof Map))
    throw new Error(fauxqsChanged('SqsQueue.messages'));
  if (queue.messages.length > 0 || queue.inflightMessages.size > 0)
    throw new Error('makeQueueFair: the queue already holds messages');
  const inFlight = new InFlightByTenant();
  queue.inflightMessages = inFlight;
  let lanes = new TenantLanes<SqsMessage>(inFlight);
  // fauxqs pushes, shifts, counts and lists its ready messages; a purge replaces them with an empty array.
  Object.defineProperty(queue, 'messages', {
    configurable: true,
    enumerable: true,
    get: () => lanes,
    set: (messages: SqsMessage[]) => {
      lanes = new TenantLanes<SqsMessage>(inFlight);
      lanes.push(...messages);
    },
  });
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = (message: SqsMessage) => {
    // A message moved here from another queue (a dead-letter queue's) keeps the group id it has.
    if (message.messageGroupId === undefined) message.messageGroupId = sentGroupId(message.body);
    enqueue(message);
  };
  return queue;
};
