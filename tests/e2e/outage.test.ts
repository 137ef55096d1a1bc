/**
 * A SAP maintenance window through `npm start` (docs/behaviour.md#outages-and-holds): the SAP sandbox
 * is switched down over its own control endpoint, sales keep coming for many times as long as all of a record's
 * attempts take, the sandbox stays down a while longer and comes back; every sale sent meanwhile is then
 * delivered exactly once, none was ever `failed`, nothing reached the dead-letter queue, and SAP saw only probes
 * while it was down.
 *
 * Then a hold hours old: every waiting record has been in a failed probe, so each is due hours
 * ahead and every copy hidden as long; SAP comes back and the first record is delivered within a probe period and
 * a reconciler period, then every record once. `npm start` runs on the real clock, so the hold's age is written:
 * the hold opens for real and its item's `heldSince` is then set three hours back in the store (the failed probes
 * that follow put their records off by half that, as after a real three-hour outage).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdKey } from '../../lib/outage/constants.ts';
import { localClientConfig } from '../../local/aws.ts';
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

/** The store of a running `npm start`, through the endpoint its runner wrote to `<DATA_DIR>/runner.json`. */
const storeOf = async (dataDir: string) => {
  const runner = JSON.parse(await readFile(join(dataDir, 'runner.json'), 'utf8')) as {
    dynamoEndpoint: string;
    env: { RECORDS_TABLE: string };
  };
  const client = new DynamoDBClient({ ...localClientConfig(runner.dynamoEndpoint), maxAttempts: 3 });
  return { client, table: runner.env.RECORDS_TABLE };
};

describe('a SAP outage hours old, every record put off by its failed probe, through npm start', () => {
  const PROBE = 2;
  const RECONCILE_INTERVAL = 2;
  /** The message's way to a worker (the local poller's turn), SAP's call, and this test's look-ups' period. */
  const DELIVERY_SLACK_SECONDS = 3;
  let sap: SapSandbox;
  let dir: string;
  let service: RunningService | undefined;
  let store: Awaited<ReturnType<typeof storeOf>> | undefined;
  beforeAll(async () => {
    sap = await startSapSandbox({ username: 'LONGHOLD', password: 'long-hold-pass' });
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-long-hold-'));
  });
  afterAll(async () => {
    store?.client.destroy();
    await service?.stop().catch(() => {});
    await sap.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers the first record within a probe and a reconciler period of SAP coming back, then every record once', async () => {
    // Prepare: short periods; attempts enough that no record fails before the hold opens.
    service = await npmStart({
      DATA_DIR: dir,
      ERP_BASE_URL: sap.url,
      ERP_USERNAME: 'LONGHOLD',
      ERP_PASSWORD: 'long-hold-pass',
      DELIVERY_MAX_ATTEMPTS: '10',
      DELIVERY_RETRY_BASE_SECONDS: '1',
      OUTAGE_AFTER_FAILURES: '2',
      OUTAGE_PROBE_SECONDS: String(PROBE),
      RECONCILE_INTERVAL_SECONDS: String(RECONCILE_INTERVAL),
      RECONCILE_AFTER_SECONDS: '2',
      POWERTOOLS_LOG_LEVEL: 'WARN',
    });
    const running = service;
    store = await storeOf(dir);
    const { client, table } = store;
    const send = async () => {
      const response = await fetch(`${running.url}/erp/sales_registration`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': running.keys['example-dealer'] },
        body: JSON.stringify([salesRegistrationInput({ FrameNum: uniqueFrame('LONG') })]),
      });
      expect(response.status).toBe(200);
      const { registrations } = (await response.json()) as { registrations: { id: string }[] };
      return registrations[0].id;
    };
    const dueAtOf = async (id: string) => {
      const out = await client.send(
        new GetItemCommand({ TableName: table, Key: { pk: { S: id } }, ConsistentRead: true }),
      );
      return out.Item?.dueAt?.S ?? '';
    };
    // A sale delivered first: the worker holds a CSRF token, so its probes are delivery calls.
    const warmUp = await send();
    for (let i = 0; i < 100 && (await lookUp(running, warmUp)).status !== 'delivered'; i++) await sleep(200);
    // SAP down, three sales; the hold opens on their failures.
    await switchSap(sap, true);
    const ids = [await send(), await send(), await send()];
    let heldSince: string | undefined;
    for (let i = 0; i < 150 && !heldSince; i++) {
      heldSince = (await lookUp(running, ids[0])).heldSince;
      if (!heldSince) await sleep(200);
    }
    // The hold three hours old: its version bumped too, so a worker's change computed before this is refused.
    const threeHoursAgo = new Date(Date.now() - 3 * 3600 * 1000).toISOString();
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: holdKey('erp') } },
        UpdateExpression: 'SET heldSince = :old, version = version + :one',
        ConditionExpression: 'held = :true',
        ExpressionAttributeValues: {
          ':old': { S: threeHoursAgo },
          ':one': { N: '1' },
          ':true': { BOOL: true },
        },
      }),
    );
    // Until every sale has been in a failed probe since: each then due over an hour ahead (half the hold's age).
    const putOff = new Set<string>();
    const putOffBy = Date.now() + 60_000;
    while (putOff.size < ids.length && Date.now() < putOffBy) {
      for (const id of ids)
        if ((await dueAtOf(id)) > new Date(Date.now() + 3600 * 1000).toISOString()) putOff.add(id);
      await sleep(100);
    }
    const allPutOff = putOff.size === ids.length;

    // Act: SAP back; look-ups until the first sale is delivered (or far longer than the bound), then all.
    const whileDown = await switchSap(sap, false);
    const upAt = Date.now();
    let firstDeliveredAfter = Number.POSITIVE_INFINITY;
    while (Date.now() - upAt < 30_000) {
      const statuses = await Promise.all(ids.map((id) => lookUp(running, id)));
      if (statuses.some((status) => status.status === 'delivered')) {
        firstDeliveredAfter = (Date.now() - upAt) / 1000;
        break;
      }
      await sleep(200);
    }
    let finals = await Promise.all(ids.map((id) => lookUp(running, id)));
    for (let i = 0; i < 60 && finals.some((status) => status.status === 'accepted'); i++) {
      await sleep(1000);
      finals = await Promise.all(ids.map((id) => lookUp(running, id)));
    }
    const deadLetters = await deadLettersInStore(dir);
    process.stdout.write(
      `long-hold e2e: calls while down ${whileDown.callsWhileDown}; first delivered ${firstDeliveredAfter.toFixed(1)} s ` +
        `after SAP came back (bound ${PROBE + RECONCILE_INTERVAL} s + ${DELIVERY_SLACK_SECONDS} s)\n`,
    );

    // Assess
    expect(heldSince).toBeDefined();
    expect(allPutOff).toBe(true);
    expect(firstDeliveredAfter).toBeLessThanOrEqual(PROBE + RECONCILE_INTERVAL + DELIVERY_SLACK_SECONDS);
    expect(finals.map((status) => status.status)).toEqual(['delivered', 'delivered', 'delivered']);
    for (const id of ids) expect(sap.registrations.filter((r) => r.RegistrationId === id)).toHaveLength(1);
    expect(deadLetters).toEqual({
      SalesRegistrationDeadLetterQueue: 0,
      CaseDeadLetterQueue: 0,
      WebhookDeadLetterQueue: 0,
    });
  }, 240_000);
});
