import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitForPortFree } from '../../local/ports.ts';

const listen = () =>
  new Promise<{ server: Server; port: number }>((resolve) => {
    const server = createServer();
    server.listen(0, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });

describe('waitForPortFree', () => {
  it('waits for a port that is released meanwhile, saying what it waits for', async () => {
    const { server, port } = await listen();
    const lines: string[] = [];
    setTimeout(() => server.close(), 300);
    await waitForPortFree(port, { log: (line) => lines.push(line) });
    expect(lines).toEqual([
      `port ${port} is in use: waiting up to 10 s for it to be released (a local stack that is stopping releases it within seconds)`,
      expect.stringMatching(new RegExp(`^port ${port} is free after \\d+ ms$`)),
    ]);
  });

  it('refuses a port that stays in use', async () => {
    const { server, port } = await listen();
    await expect(waitForPortFree(port, { timeoutMs: 300, log: () => {} })).rejects.toThrow(
      `port ${port} is in use (still, after 0.3 s): stop whatever listens there or set PORT to another port`,
    );
    server.close();
  });
});
