/**
 * A retry after a timeout is delivered as fast as a first try (docs/behaviour.md#duplicates-and-retries): `npm start`
 * with a real HTTP proxy between its API handlers and SQS (LOCAL_API_PROXY_SQS) that cuts the first request after
 * its records are stored and before they are queued; the client retries the same request, with an
 * `Idempotency-Key` and without, and every record reaches the built-in SAP sandbox within seconds, not the
 * reconciler's five minutes (RECONCILE_AFTER_SECONDS, default 300).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localEndpointsFile } from '../../local/stack.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { type FaultProxy, startFaultProxy, upstreamFromFile } from '../../testkit/faultProxy.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';

const SALES = '/erp/sales_registration';
/** Well within the reconciler's first look (300 s after acceptance). */
const WITHIN_MS = 20_000;

describe('a request cut between the store and the queue, then retried', () => {
  let service: RunningService;
  let proxy: FaultProxy;
  let dir: string;
  /** While set, every SendMessageBatch of the API handlers fails (SQS answers 500). */
  let cut = false;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-retry-cut-'));
    proxy = await startFaultProxy({
      upstream: upstreamFromFile(localEndpointsFile(dir), 'sqs'),
      policy: (operation) =>
        cut && operation === 'SendMessageBatch'
          ? { kind: 'error', status: 500, type: 'com.amazonaws.sqs#InternalError' }
          : undefined,
    });
    service = await npmStart({ DATA_DIR: dir, LOCAL_API_PROXY_SQS: proxy.endpoint });
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
    await proxy?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(`${service.url}${SALES}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': service.keys['example-dealer'],
        ...headers,
      },
      body: JSON.stringify(body),
    });

  /** Each record's status, polled until none is `accepted` or `WITHIN_MS` is up; the statuses and the time taken. */
  const settled = async (ids: string[]) => {
    const started = Date.now();
    for (;;) {
      const statuses = await Promise.all(
        ids.map(async (id) => {
          const response = await fetch(`${service.url}${SALES}/${id}`, {
            headers: { 'x-api-key': service.keys['example-dealer'] },
          });
          return ((await response.json()) as { status: string; attempts: number }).status;
        }),
      );
      if (statuses.every((status) => status !== 'accepted') || Date.now() - started > WITHIN_MS)
        return { statuses, ms: Date.now() - started };
      await sleep(250);
    }
  };

  it.each([
    ['with an Idempotency-Key', () => ({ 'Idempotency-Key': `cut-${uniqueFrame()}` })],
    ['without a key (the content decides)', () => ({})],
  ])(
    'delivers every record of the retry within seconds, %s',
    async (_how, headersOf) => {
      // Prepare: 30 sales (three SQS batches); SQS cut for the first try only.
      const records = Array.from({ length: 30 }, () =>
        salesRegistrationInput({ FrameNum: uniqueFrame('CUT') }),
      );
      const headers = headersOf();
      cut = true;
      const first = await post(records, headers);
      cut = false;
      // Act: the client retries the identical request, as docs/API.md tells it to.
      const retried = await post(records, headers);
      const body = (await retried.json()) as { registrations: { id: string }[] };
      const ids = body.registrations.map((r) => r.id);
      const { statuses, ms } = await settled(ids);
      // Assess: stored by the first try (the retry names the same records), delivered within seconds, each once.
      expect(first.status).toBe(503);
      expect(retried.status).toBe(200);
      expect(new Set(ids).size).toBe(30);
      expect(statuses.filter((status) => status !== 'delivered')).toEqual([]);
      expect(ms).toBeLessThan(WITHIN_MS);
    },
    60_000,
  );
});
