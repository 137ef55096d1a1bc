/**
 * The local stack (local/stack.ts) when a port chosen for serverless-offline is taken before offline binds it: the
 * ports come from the OS a moment before offline starts, and another process may take one meanwhile (a red CI run
 * saw offline exit with `EADDRINUSE` on its lambda port). The stack chooses other ports and starts offline again.
 *
 * Control: a port that stays taken however often ports are chosen ends the start-up, naming the port, after a
 * bounded number of tries.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../local/ports.ts';
import { startLocalStack } from '../../local/stack.ts';
import { storeScope } from '../local/storeProcesses.ts';

const { dataDir } = storeScope('dealer-gateway-taken-port-');
const held: Server[] = [];
afterAll(async () => {
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port this test listens on, as another process would after the stack chose it. */
const takenPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  held.push(server);
  return (server.address() as { port: number }).port;
};

describe('npm start when a port chosen for serverless-offline is taken before it binds it', () => {
  it('chooses other ports and serves', async () => {
    // Prepare: the first choice hands out a taken port as offline's lambda port; later choices are free.
    const taken = await takenPort();
    const choices: number[][] = [];
    const pickPorts = async (count: number) => {
      const ports = choices.length === 0 ? [taken, ...(await freePorts(count - 1))] : await freePorts(count);
      choices.push(ports);
      return ports;
    };

    // Act
    const stack = await startLocalStack({ port: 0, dataDir: await dataDir(), freePorts: pickPorts });
    try {
      const answer = await fetch(`${stack.url}/openapi.json`);

      // Assess
      expect(answer.status).toBe(200);
      expect(choices.length).toBe(2);
      expect(stack.env.OFFLINE_LAMBDA_PORT).not.toBe(String(taken));
    } finally {
      await stack.stop();
    }
  }, 90_000);

  it('(control) gives up after its tries when the port stays taken, naming it', async () => {
    // Prepare: every choice hands out the same taken port.
    const taken = await takenPort();
    let choices = 0;
    const pickPorts = async (count: number) => {
      choices++;
      return [taken, ...(await freePorts(count - 1))];
    };

    // Act
    const starting = startLocalStack({ port: 0, dataDir: await dataDir(), freePorts: pickPorts });

    // Assess
    await expect(starting).rejects.toThrow(new RegExp(`EADDRINUSE.*:${taken}`));
    expect(choices).toBe(3);
    // Three starts of the stack's parts (the OpenID Connect provider among them) outlast vitest's 20 s when busy.
  }, 90_000);
});
