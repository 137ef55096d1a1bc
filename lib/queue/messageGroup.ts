import { readQueuedRecord } from './queuedRecord.ts';

/**
 * SQS takes a group id of at most 128 characters. A client's name is at most 63; a browser form's owner
 * (`browser-form:<origin>`) could be longer, and a refused entry would never be queued.
 */
const MAX_GROUP_ID = 128;

/**
 * The MessageGroupId of a message of `owner`'s record: the client is the message's tenant. On a standard queue a
 * group id turns on SQS fair queues, so one client's backlog does not hold up the others' records (docs/design.md,
 * "Fair share between clients"). Every send of a record's message names it (intake, the reconciler, the worker's
 * dead-letter copy, the redrive), so the message keeps its tenant wherever it goes: a message without one is a
 * tenant of its own, which a fair queue serves first in, first out, ahead of a noisy client's backlog or behind it.
 *
 * @returns `{ MessageGroupId }`, or nothing for a message with no owner (an older message).
 * @example
 * messageGroupOf('example-dealer') // { MessageGroupId: 'example-dealer' }
 */
export const messageGroupOf = (owner: string | undefined): { MessageGroupId?: string } =>
  owner ? { MessageGroupId: owner.slice(0, MAX_GROUP_ID) } : {};

/**
 * The MessageGroupId of a message body, from the owner the body names (lib/queue/queuedRecord.ts), as
 * {@link messageGroupOf} gives it.
 *
 * @example
 * messageGroupOfBody('{"id":"3f0c…","kind":"caseRecord","requestId":"r1","owner":"example-dealer"}')
 * // { MessageGroupId: 'example-dealer' }
 */
export const messageGroupOfBody = (body: string): { MessageGroupId?: string } =>
  messageGroupOf(readQueuedRecord(body)?.owner);
