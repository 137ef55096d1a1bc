/**
 * An SAP outage at a quiet hour through `npm start`: one sale alone, then two sales in one `$batch`, each sent while
 * SAP is down for far longer than all of a record's tries take. With the settings an operator tried
 * (OUTAGE_AFTER_FAILURES 3, OUTAGE_PROBE_SECONDS 2, DELIVERY_MAX_ATTEMPTS 4, DELIVERY_RETRY_BASE_SECONDS 1) the
 * failures in a row open the hold whatever the records (a call that failed whole counts once per record it
 * carried), the failure that opens it spends no try, and no record is ever `failed`: each is delivered once when SAP
 * comes back. Before, the lone sale spent all its tries (a hold wanted failures of two records), and the pair gave
 * their tries back four times without a hold, then spent their own: one was `failed` 40 s into the outage.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

/** How long SAP stays down after the sales were sent: far longer than all of a record's tries take (about 8 s). */
const DOWN_SECONDS = 20;

interface Status {
  status: string;
  attempts?: number;
}

describe('an SAP outage at a quiet hour, through npm start', () => {
  let sap: SapSandbox;
  let dir: string;
  let service: RunningService;
  beforeAll(async () => {
    sap = await startSapSandbox({ username: 'QUIET', password: 'quiet-pass' });
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-quiet-outage-'));
    service = await npmStart({
      DATA_DIR: dir,
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'QUIET',
      ERP_PASSWORD: 'quiet-pass',
      OUTAGE_AFTER_FAILURES: '3',
      OUTAGE_PROBE_SECONDS: '2',
      DELIVERY_MAX_ATTEMPTS: '4',
      DELIVERY_RETRY_BASE_SECONDS: '1',
      RECONCILE_INTERVAL_SECONDS: '2',
      RECONCILE_AFTER_SECONDS: '10',
      POWERTOOLS_LOG_LEVEL: 'WARN',
    });
  }, 90_000);
  afterAll(async () => {
    await service?.stop().catch(() => {});
    await sap.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const lookUp = async (id: string): Promise<Status> => {
    const response = await fetch(`${service.url}/erp/sales_registration/${id}`, {
      headers: { 'x-api-key': service.keys['example-dealer'] },
    });
    return (await response.json()) as Status;
  };
  const send = async (count: number): Promise<string[]> => {
    const response = await fetch(`${service.url}/erp/sales_registration`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': service.keys['example-dealer'] },
      body: JSON.stringify(
        Array.from({ length: count }, () => salesRegistrationInput({ FrameNum: uniqueFrame('QUIET') })),
      ),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { registrations: { id: string }[] }).registrations.map((r) => r.id);
  };
  const switchSap = async (down: boolean) => {
    await fetch(`${sap.url}/_sandbox/outage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ down }),
    });
  };
  /** Sends `count` sales together while SAP is down for DOWN_SECONDS; every state seen meanwhile, then after. */
  const throughAnOutage = async (count: number) => {
    await switchSap(true);
    const ids = await send(count);
    const seen: string[] = [];
    const downAt = Date.now();
    while (Date.now() - downAt < DOWN_SECONDS * 1000) {
      for (const id of ids) seen.push((await lookUp(id)).status);
      await sleep(1000);
    }
    await switchSap(false);
    const upAt = Date.now();
    let after = await Promise.all(ids.map(lookUp));
    while (after.some((s) => s.status === 'accepted') && Date.now() - upAt < 60_000) {
      await sleep(500);
      after = await Promise.all(ids.map(lookUp));
    }
    return { ids, seen, after };
  };

  it('holds for one sale alone instead of failing it, and delivers it once when SAP is back', async () => {
    // Act
    const { ids, seen, after } = await throughAnOutage(1);
    // Assess
    expect(seen).not.toContain('failed');
    expect(new Set(seen)).toEqual(new Set(['accepted']));
    expect(after.map((s) => s.status)).toEqual(['delivered']);
    expect(sap.registrations.filter((r) => r.RegistrationId === ids[0])).toHaveLength(1);
  }, 150_000);

  it('holds for two sales in one $batch instead of failing either, and delivers each once when SAP is back', async () => {
    // Act
    const { ids, seen, after } = await throughAnOutage(2);
    // Assess
    expect(seen).not.toContain('failed');
    expect(after.map((s) => s.status)).toEqual(['delivered', 'delivered']);
    for (const id of ids) expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
  }, 150_000);
});
