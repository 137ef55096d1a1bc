/**
 * A SAP maintenance window through `npm start` (CONTRACT 3, "Outages: waited out, not failed"): the SAP sandbox
 * is switched down over its own control endpoint, sales keep coming for many times as long as all of a record's
 * attempts take, the sandbox stays down a while longer and comes back; every sale sent meanwhile is then
 * delivered exactly once, none was ever `failed`, nothing reached the dead-letter queue, and SAP saw only probes
 * while it was down.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { deadLettersInStore, recordPathsInStore } from '../../soak/storeHistory.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

const ATTEMPTS = 3;
const RETRY_BASE_SECONDS = 1;
const AFTER_FAILURES = 3;
const PROBE_SECONDS = 3;
/** All of one record's attempts: waits of 1 s and 2 s, plus at most 20 % jitter. */
const ATTEMPTS_SPAN_SECONDS = RETRY_BASE_SECONDS * (2 ** (ATTEMPTS - 1) - 1) * 1.2;
/** Sales keep coming for eight times the attempts' span (about 29 s), and SAP stays down a while after the last. */
const SENDING_SECONDS = Math.ceil(8 * ATTEMPTS_SPAN_SECONDS);
const QUIET_DOWN_SECONDS = 8;

interface Status {
  status: string;
  attempts?: number;
  heldSince?: string;
}

const lookUp = async (service: RunningService, id: string): Promise<Status> => {
  const response = await fetch(`${service.url}/erp/sales_registration/${id}`, {
    headers: { 'x-api-key': service.keys['example-dealer'] },
  });
  return (await response.json()) as Status;
};

const switchSap = async (sap: SapSandbox, down: boolean) => {
  const response = await fetch(`${sap.url}/_sandbox/outage`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ down }),
  });
  return (await response.json()) as { down: boolean; deliveryCallsWhileDown: number; callsWhileDown: number };
};

describe('a SAP outage far longer than all attempts take, through npm start', () => {
  let sap: SapSandbox;
  let dir: string;
  let service: RunningService | undefined;
  beforeAll(async () => {
    sap = await startSapSandbox({ username: 'OUTAGE', password: 'outage-pass' });
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-outage-'));
  });
  afterAll(async () => {
    await service?.stop().catch(() => {});
    await sap.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers every sale sent during it exactly once afterwards, none ever failed, and SAP saw only probes', async () => {
    // Prepare
    service = await npmStart({
      DATA_DIR: dir,
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'OUTAGE',
      ERP_PASSWORD: 'outage-pass',
      DELIVERY_MAX_ATTEMPTS: String(ATTEMPTS),
      DELIVERY_RETRY_BASE_SECONDS: String(RETRY_BASE_SECONDS),
      OUTAGE_AFTER_FAILURES: String(AFTER_FAILURES),
      OUTAGE_PROBE_SECONDS: String(PROBE_SECONDS),
      RECONCILE_INTERVAL_SECONDS: '2',
      RECONCILE_AFTER_SECONDS: '10',
      POWERTOOLS_LOG_LEVEL: 'WARN',
    });
    const running = service;
    const ids: string[] = [];
    const seenWhileDown: Status[] = [];
    const send = async () => {
      const response = await fetch(`${running.url}/erp/sales_registration`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': running.keys['example-dealer'] },
        body: JSON.stringify([salesRegistrationInput({ FrameNum: uniqueFrame('OUTG') })]),
      });
      expect(response.status).toBe(200);
      const { registrations } = (await response.json()) as { registrations: { id: string }[] };
      return registrations[0].id;
    };
    // One sale delivered before the window: the worker holds a CSRF token, so its calls while SAP is down are
    // delivery calls, not only token fetches.
    const warmUp = await send();
    for (let i = 0; i < 100 && (await lookUp(running, warmUp)).status !== 'delivered'; i++) await sleep(200);

    // Act: SAP down; a sale every half second for the sending period; a quiet while; SAP up.
    const down = await switchSap(sap, true);
    const downAt = Date.now();
    while (Date.now() - downAt < SENDING_SECONDS * 1000) {
      ids.push(await send());
      // The oldest sales by now have outlived their attempts' span: their look-ups show what they wait for.
      seenWhileDown.push(await lookUp(running, ids[0]));
      await sleep(500);
    }
    await sleep(QUIET_DOWN_SECONDS * 1000);
    for (const id of ids) seenWhileDown.push(await lookUp(running, id));
    const downSeconds = (Date.now() - downAt) / 1000;
    // Tries the sales have spent by the end of the outage (the failures before the hold opened count; none after).
    const pathsWhileDown = await recordPathsInStore(dir);
    const triesWhileDown = ids.map((id) => pathsWhileDown.get(id)?.tries ?? 0);
    const whileDown = await switchSap(sap, false);
    const deadline = Date.now() + 120_000;
    let open = ids;
    while (open.length > 0 && Date.now() < deadline) {
      await sleep(1000);
      const statuses = await Promise.all(open.map(async (id) => [id, await lookUp(running, id)] as const));
      open = statuses.filter(([, status]) => status.status === 'accepted').map(([id]) => id);
    }
    const finals = await Promise.all(ids.map((id) => lookUp(running, id)));
    const paths = await recordPathsInStore(dir);
    const deadLetters = await deadLettersInStore(dir);

    // Assess
    expect(down.down).toBe(true);
    expect(sap.registrations.filter((r) => r.RegistrationId === warmUp)).toHaveLength(1);
    expect(ids.length).toBeGreaterThan(SENDING_SECONDS);
    // Every sale sent during the outage: delivered, and stored by SAP exactly once.
    expect(finals.filter((status) => status.status !== 'delivered')).toEqual([]);
    for (const id of ids) expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
    // None was ever `failed`: not while it waited (look-ups), not in its history, and no dead letter.
    expect(seenWhileDown.filter((status) => status.status !== 'accepted')).toEqual([]);
    expect(seenWhileDown.some((status) => status.heldSince !== undefined)).toBe(true);
    const everFailed = ids.filter((id) => paths.get(id)?.statuses.includes('failed'));
    expect(everFailed).toEqual([]);
    expect(deadLetters).toEqual({
      SalesRegistrationDeadLetterQueue: 0,
      CaseDeadLetterQueue: 0,
      WebhookDeadLetterQueue: 0,
    });
    // Only probes while down: one per probe period, plus the failures that opened the hold (OUTAGE_AFTER_FAILURES)
    // and one call per worker already in flight when it opened (2 of slack). Every request counts (a CSRF
    // token fetch is a delivery attempt's first call), and some of them were real delivery calls.
    const probesAllowed = Math.floor(downSeconds / PROBE_SECONDS) + 1 + AFTER_FAILURES + 2;
    process.stdout.write(
      `outage e2e: ${ids.length} sales over ${downSeconds.toFixed(1)} s down; delivery calls while down ` +
        `${whileDown.deliveryCallsWhileDown} (all calls ${whileDown.callsWhileDown}), probes allowed ${probesAllowed}; ` +
        `tries spent while down: ${triesWhileDown.join(',')}; attempts after: ${finals.map((status) => status.attempts).join(',')}\n`,
    );
    expect(whileDown.callsWhileDown).toBeLessThanOrEqual(probesAllowed);
    expect(whileDown.deliveryCallsWhileDown).toBeGreaterThan(0);
  }, 300_000);
});
