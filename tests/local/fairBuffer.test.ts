/**
 * The local poller's look-ahead by client (local/fairBuffer.ts): batches filled round-robin across clients,
 * each client's oldest first, the turn carried to the next batch; a message received again held once.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FairBuffer, tenantOf } from '../../local/fairBuffer.ts';

/** Messages `<owner>-<n>` of one client, as the producers write them (owner in the body). */
const messagesOf = (owner: string, count: number, from = 0): Message[] =>
  Array.from({ length: count }, (_, i) => ({
    MessageId: `${owner}-${from + i}`,
    ReceiptHandle: `handle-${owner}-${from + i}`,
    Body: JSON.stringify({ id: `${owner}-${from + i}`, kind: 'caseRecord', requestId: 'r', owner }),
  }));

const ids = (messages: Message[]) => messages.map((m) => m.MessageId);

describe('the look-ahead by client', () => {
  it('fills a batch one client at a time, and starts the next batch with the client after the last served', () => {
    // Prepare: a flood from A received first, then B and C.
    const buffer = new FairBuffer();
    buffer.add(messagesOf('a', 6), 1);
    buffer.add([...messagesOf('b', 2), ...messagesOf('c', 1)], 2);
    // Act
    const first = buffer.takeBatch(4);
    const second = buffer.takeBatch(4);
    const third = buffer.takeBatch(4);
    // Assess
    expect(ids(first)).toEqual(['a-0', 'b-0', 'c-0', 'a-1']);
    expect(ids(second)).toEqual(['b-1', 'a-2', 'a-3', 'a-4']);
    expect(ids(third)).toEqual(['a-5']);
    expect(buffer.size).toBe(0);
  });

  it('holds a message received again once, with its newest receipt handle, in its first place', () => {
    // Prepare
    const buffer = new FairBuffer();
    buffer.add(messagesOf('a', 2), 1);
    const again = { ...messagesOf('a', 1)[0], ReceiptHandle: 'handle-newer' };
    // Act
    buffer.add([again], 5);
    const batch = buffer.takeBatch(10);
    // Assess
    expect(ids(batch)).toEqual(['a-0', 'a-1']);
    expect(batch[0].ReceiptHandle).toBe('handle-newer');
  });

  it("takes the client from SQS's MessageGroupId first, else from the body's owner", () => {
    // Prepare
    const [fromBody] = messagesOf('dealer-1', 1);
    const withGroup = { ...fromBody, Attributes: { MessageGroupId: 'dealer-2' } };
    // Act
    const tenants = [tenantOf(fromBody), tenantOf(withGroup), tenantOf({ Body: 'not json' })];
    // Assess
    expect(tenants).toEqual(['dealer-1', 'dealer-2', '']);
  });
});
