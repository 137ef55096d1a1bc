/**
 * The SQS-compatible queue (fauxqs), in this process, in memory, on 127.0.0.1 only. Its standard queues are fair
 * queues, as standard queues are on AWS for messages that carry a MessageGroupId (local/emulators/fauxqs/fairQueue.ts).
 */
import { buildApp } from 'fauxqs';
// Not exported by the package, but buildApp() accepts the stores (the same module instances it uses).
import { S3Store } from '../node_modules/fauxqs/dist/s3/s3Store.js';
import { SnsStore } from '../node_modules/fauxqs/dist/sns/snsStore.js';
import { SqsStore } from '../node_modules/fauxqs/dist/sqs/sqsStore.js';
import { keepQueuesOnDisk } from './emulators/fauxqs/durableQueues.ts';
import { makeQueueFair } from './emulators/fauxqs/fairQueue.ts';
import { assertPatchedVersion } from './emulators/versionGate.ts';
import { localRegion } from './project.ts';

export interface LocalQueueServer {
  /** e.g. http://127.0.0.1:41234; queue URLs are http://127.0.0.1:41234/000000000000/<name>. */
  endpoint: string;
  /**
   * Keeps these queues (created already, still empty) in `<dir>/fauxqs.db` from now on, with what an earlier run
   * left there: the queues whose messages nothing else keeps (local/emulators/fauxqs/durableQueues.ts).
   */
  keepOnDisk(names: readonly string[], dir: string): void;
  close(): Promise<void>;
}

export async function startLocalQueue(): Promise<LocalQueueServer> {
  // Its patches (fair queues, queues on disk) reach into fauxqs's internals of one exact version.
  assertPatchedVersion('fauxqs');
  // Not startFauxqs(): it always listens on 0.0.0.0. And not buildApp's default store: it names queues
  // http://sqs.<region>.localhost:<port>/..., a host that does not resolve here, and the SQS SDK sends
  // requests to the QueueUrl's host when it differs from an endpoint given by AWS_ENDPOINT_URL_SQS. With an
  // empty `host`, fauxqs builds queue URLs from the request's Host header: http://127.0.0.1:<port>/...
  const sqsStore = new SqsStore();
  sqsStore.host = '';
  const createQueue = sqsStore.createQueue.bind(sqsStore);
  sqsStore.createQueue = (...args) => makeQueueFair(createQueue(...args));
  const app = buildApp({
    logger: false,
    defaultRegion: localRegion,
    stores: { sqsStore, snsStore: new SnsStore(), s3Store: new S3Store() },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('fauxqs did not report its port');
  let closing: Promise<void> | undefined;
  const closeDisk: (() => void)[] = [];
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    keepOnDisk(names, dir) {
      closeDisk.push(keepQueuesOnDisk(sqsStore, names, dir));
    },
    close() {
      closing ??= (async () => {
        const closed = app.close();
        // Long-polling ReceiveMessage calls would otherwise hold the server open for up to 20 s.
        app.server.closeAllConnections();
        await closed;
        for (const close of closeDisk) close();
      })();
      return closing;
    },
  };
}
