/**
 * The record ids that reach the delivery queues' dead-letter queues during the campaign. The local queue keeps them
 * in memory only (a SIGKILL of npm start empties it), so they are watched while the campaign runs: every couple of
 * seconds each dead-letter queue is read through (each message hidden a few seconds, so a read goes past it and
 * it is there again for the next), through the endpoint and queue URLs the running `npm start` wrote to
 * `<dataDir>/runner.json`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { localClientConfig } from '../local/aws.ts';

/** The delivery queues' dead-letter queues, by logical id (serverless.yml). */
export const DEAD_LETTER_QUEUES = ['SalesRegistrationDeadLetterQueue', 'CaseDeadLetterQueue'] as const;

interface RunnerFile {
  sqsEndpoint?: string;
  queues?: Record<string, { url: string }>;
}

/**
 * The record ids (message bodies' `id`) now in the dead-letter queues of the `npm start` running on `dataDir`;
 * undefined when it cannot be read (not running, restarting).
 *
 * @example
 * await deadLetteredIds(dataDir) // ['3f0c…']
 */
export const deadLetteredIds = async (dataDir: string): Promise<string[] | undefined> => {
  let runner: RunnerFile;
  try {
    runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as RunnerFile;
  } catch {
    return undefined;
  }
  if (!runner.sqsEndpoint || !runner.queues) return undefined;
  const sqs = new SQSClient({ ...localClientConfig(runner.sqsEndpoint), maxAttempts: 2 });
  try {
    const ids: string[] = [];
    for (const logicalId of DEAD_LETTER_QUEUES) {
      const url = runner.queues[logicalId]?.url;
      if (!url) continue;
      for (;;) {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 5 }),
        );
        const messages = out.Messages ?? [];
        for (const message of messages) ids.push(idOfBody(message.Body ?? ''));
        if (messages.length === 0) break;
      }
    }
    return ids;
  } catch {
    return undefined;
  } finally {
    sqs.destroy();
  }
};

/** A message body's record id, or `?`. */
const idOfBody = (body: string): string => {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : '?';
  } catch {
    return '?';
  }
};

/**
 * Reads the dead-letter queues every `everyMs` until stopped; the stop reads them once more and gives every id
 * seen.
 *
 * @example
 * const stop = watchDeadLetters(dataDir);
 * const seen = await stop(); // Set { '3f0c…' }
 */
export const watchDeadLetters = (dataDir: string, everyMs = 2000): (() => Promise<Set<string>>) => {
  const seen = new Set<string>();
  let running = true;
  const note = async () => {
    for (const id of (await deadLetteredIds(dataDir)) ?? []) seen.add(id);
  };
  const loop = (async () => {
    while (running) {
      await note();
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    running = false;
    await loop;
    await note();
    return seen;
  };
};
