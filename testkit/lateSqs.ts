/**
 * An SQS client whose every call answers late, as fauxqs does on a loaded machine: the poller tests run with it
 * beside the prompt client, because a fake clock moved by the poller's own waits can run far ahead of a slow
 * receive (CI once found a test that stopped its clock before the first batch and waited for ever).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';

/**
 * Wraps `sqs` so that each `send` starts `lateMs` later; 0 gives `sqs` itself.
 *
 * @example
 * startPoller({ sqs: lateSqs(aws.sqs, 300), queueUrl, handler }) // every receive and delete 300 ms late
 */
export const lateSqs = (sqs: SQSClient, lateMs: number): SQSClient => {
  if (lateMs === 0) return sqs;
  const late = {
    send: async (...args: Parameters<SQSClient['send']>) => {
      await new Promise((resolve) => setTimeout(resolve, lateMs));
      return sqs.send(...args);
    },
  };
  return late as unknown as SQSClient;
};
