/**
 * The worker when the event bus does not answer right after an outcome (lib/delivery/recordOutcome.ts), against
 * dynalite, fauxqs, the real SAP sandbox and the EventBridge recorder put down: the outcome stands, its event stays
 * in the record's outbox for the reconciler, and the worker says so in a warning naming the record and the try.
 * A file of its own: a failed publish pauses the bus for this module (lib/outbox/publish.ts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deliverMessages } from '../../lib/delivery/deliverBatch.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { logger } from '../../lib/observability/logger.ts';
import { OutcomeTally } from '../../lib/observability/metrics.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type SapSandbox, startSapSandbox } from '../../sandbox/sapSandbox.ts';
import { startEventBridgeRecorder } from '../../testkit/eventBridgeRecorder.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { acceptSales, DELIVERY, forgetHolds, OUTAGE, receive } from './support.ts';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let sap: SapSandbox;
let bus: Awaited<ReturnType<typeof startEventBridgeRecorder>>;

beforeAll(async () => {
  aws = await isolatedAws();
  [sap, bus] = await Promise.all([startSapSandbox(), startEventBridgeRecorder()]);
  Object.assign(process.env, {
    ERP_BASE_URL: sap.url,
    ERP_USERNAME: sap.username,
    ERP_PASSWORD: sap.password,
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    EVENT_BUS_NAME: 'dealer-gateway-test',
  });
  await forgetHolds(aws.dynamoEndpoint);
  resetDownstreamClients();
});

afterAll(async () => {
  await Promise.all([sap.stop(), bus.stop()]);
});

describe('an outcome whose event the bus does not take at once', () => {
  it('keeps the event in the outbox and warns, naming the record and the try', async () => {
    // Prepare: a registration accepted (its `accepted` event published), then the bus down.
    const [id] = await acceptSales(1);
    const { byId } = await receive(aws.sqs, aws.resources.queues.SalesRegistrationQueue.url, 1);
    bus.setMode('down');
    const log = logger.createChild();
    const warn = vi.spyOn(log, 'warn');
    const published = bus.entries.length;
    // Act
    const [result] = await deliverMessages([byId(id)], {
      settings: DELIVERY,
      log,
      tally: new OutcomeTally(),
      holds: createDownstreamHolds(OUTAGE),
      outage: OUTAGE,
    });
    // Assess
    expect(result.ok).toBe(true);
    const status = await getStatusRecord(id);
    expect(status).toMatchObject({ status: 'delivered' });
    expect(status?.pendingEvents).toEqual([expect.objectContaining({ state: 'delivered' })]);
    expect(bus.entries.length).toBe(published);
    expect(warn.mock.calls).toEqual([
      [
        'state change not published yet: the reconciler publishes it',
        { correlationId: expect.any(String), recordId: id, downstream: 'erp', attempt: 1 },
      ],
    ]);
  });
});
