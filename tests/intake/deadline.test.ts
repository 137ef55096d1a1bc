/**
 * Intake's AWS calls share one deadline: the invocation's remaining time less what answering needs. A DynamoDB or
 * SQS that never answers costs the caller a 503 in the contract's shape before the function would time out, never
 * the gateway's 504.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

let silent: Server;
const sockets: Socket[] = [];

beforeAll(async () => {
  await isolatedAws();
  // Accepts connections and never answers: a store that hangs.
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as { port: number };
  process.env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe('a store that never answers', () => {
  it('gets the caller a 503 with Retry-After before the function times out', async () => {
    // Prepare: an invocation with 4 s left (the deadline is 4 s less the answer reserve).
    const remainingMs = 4_000;
    const context = { ...lambdaContext(), getRemainingTimeInMillis: () => remainingMs };
    const started = Date.now();
    // Act
    const response = await salesHandler(
      jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame() })]),
      context,
    );
    const tookMs = Date.now() - started;
    // Assess: answered within the invocation's time, in the contract's 503 shape.
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['retry-after']).toBe('5');
    expect(response.body).toMatch(/^An unexpected error has occurred\. .* Reference: /);
    expect(tookMs).toBeLessThan(remainingMs);
  });
});
