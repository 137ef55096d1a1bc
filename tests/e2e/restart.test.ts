import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../local/ports.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

interface Status {
  status: string;
  attempts?: number;
}

const lookUp = async (service: RunningService, id: string): Promise<Status> => {
  const response = await fetch(`${service.url}/erp/sales_registration/${id}`, {
    headers: { 'x-api-key': service.keys['example-dealer'] },
  });
  return (await response.json()) as Status;
};

/** Polls the registration's status until `done` holds (or 20 s pass), and returns the last answer. */
const until = async (service: RunningService, id: string, done: (status: Status) => boolean) => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await lookUp(service, id);
    if (done(status) || Date.now() > deadline) return status;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * A person stops `npm start` in any way (Ctrl-C, SIGTERM or SIGHUP to its process group, or SIGKILL of the whole
 * group) and starts it again at once, on the same data directory and port. One data directory through all four
 * stops keeps the run short (each start takes a few seconds).
 */
describe('npm start again right after it was stopped', () => {
  let sap: SapSandbox;
  let dir: string;
  let service: RunningService | undefined;
  beforeAll(async () => {
    sap = await startSapSandbox({ username: 'RESTART', password: 'restart-pass' });
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-restart-'));
  });
  afterAll(async () => {
    await service?.stop().catch(() => {});
    await sap.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('comes up after SIGTERM, SIGINT, SIGHUP and SIGKILL, and delivers what was accepted before the stop', async () => {
    // Prepare
    const [port] = await freePorts(1);
    const settings = {
      DATA_DIR: dir,
      PORT: String(port),
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'RESTART',
      ERP_PASSWORD: 'restart-pass',
    };
    service = await npmStart(settings);
    const signals = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGKILL'] as const;
    const ids: string[] = [];
    const afterRestart: Record<string, Status> = {};
    for (const signal of signals) {
      // A registration that SAP refuses once (retry in 30 s): it is still `accepted` when the stack stops.
      sap.inject({ status: 503 });
      const response = await fetch(`${service.url}/erp/sales_registration`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
        body: JSON.stringify([salesRegistrationInput({ FrameNum: uniqueFrame('RSTRT') })]),
      });
      const { registrations } = (await response.json()) as { registrations: { id: string }[] };
      const id = registrations[0].id;
      ids.push(id);
      expect(await until(service, id, (status) => status.attempts === 1)).toMatchObject({
        status: 'accepted',
        attempts: 1,
      });
      // Act: stop it the person's way, and start again at once.
      process.kill(-(service.process.pid as number), signal);
      const stopped = service;
      service = undefined;
      service = await npmStart(settings).catch((error: Error) => {
        throw new Error(
          `npm start right after ${signal} failed: ${error.message}\nThe stopped one said:\n${stopped.output().slice(-4000)}`,
        );
      });
      afterRestart[signal] = await until(service, id, (status) => status.status !== 'accepted');
    }
    await service.stop();
    service = undefined;
    // Assess: each record accepted before a stop was queued again by the next start and delivered, once.
    for (const [index, signal] of signals.entries()) {
      expect({ signal, ...afterRestart[signal] }).toMatchObject({ signal, status: 'delivered', attempts: 2 });
      expect(sap.registrations.filter((r) => r.RegistrationId === ids[index])).toHaveLength(1);
    }
  }, 120_000);
});
