import type { IncomingMessage } from 'node:http';
import { buffer } from 'node:stream/consumers';

/** The whole body of a request a test server received (Node's own stream consumer). */
export const readBody = (req: IncomingMessage): Promise<Buffer> => buffer(req);
