import { type ProxyFault, startFaultProxy } from './faultProxy.ts';

type Mode =
  | { kind: 'pass' }
  /** Let `remaining` matching calls through, then answer every further one with 500 until healed. */
  | { kind: 'failAfter'; remaining: number }
  /** Refuse the first entry of the next matching SendMessageBatch (as SQS does under internal errors), once. */
  | { kind: 'refuseFirstEntryOnce' }
  /** Forward the next matching call, then cut the connection instead of answering (the answer is lost), once. */
  | { kind: 'loseAnswerOnce' };

/**
 * A real HTTP proxy in front of the local SQS or DynamoDB (JSON protocol) that injects faults into chosen
 * operations, so that tests see exactly what the service sees when they fail: 5xx answers, refused batch entries
 * and answers lost after the call took effect. A scripted use of soak/faultProxy.ts.
 *
 * @example
 * const proxy = await startFaultyProxy(sqsEndpoint, 'SendMessageBatch');
 * proxy.failAfter(1); // the second batch and all after it fail
 */
export const startFaultyProxy = async (target: string, operation: string) => {
  let mode: Mode = { kind: 'pass' };
  const calls: string[] = [];
  const decide = (op: string): ProxyFault | undefined => {
    calls.push(op);
    if (op !== operation) return undefined;
    switch (mode.kind) {
      case 'failAfter':
        if (mode.remaining <= 0)
          return { kind: 'error', status: 500, type: 'com.amazonaws.sqs#InternalError' };
        mode.remaining--;
        return undefined;
      case 'refuseFirstEntryOnce':
        if (op !== 'SendMessageBatch') return undefined;
        mode = { kind: 'pass' };
        return { kind: 'refuseEntry' };
      case 'loseAnswerOnce':
        mode = { kind: 'pass' };
        return { kind: 'loseAnswer' };
      default:
        return undefined;
    }
  };
  const proxy = await startFaultProxy({ upstream: target, policy: decide });
  return {
    endpoint: proxy.endpoint,
    calls,
    failAfter: (successes: number) => {
      mode = { kind: 'failAfter', remaining: successes };
    },
    refuseFirstEntryOnce: () => {
      mode = { kind: 'refuseFirstEntryOnce' };
    },
    loseAnswerOnce: () => {
      mode = { kind: 'loseAnswerOnce' };
    },
    heal: () => {
      mode = { kind: 'pass' };
    },
    stop: proxy.stop,
  };
};
