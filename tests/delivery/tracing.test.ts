/**
 * The worker's spans (contract section 8), against dynalite, fauxqs and the SAP sandbox: each record's delivery
 * attempt is a span of the record's trace, a failed one marked ERROR with the downstream's HTTP status; a batched
 * call is one span linked to every record it carried, no record's span its parent; every request to SAP (the CSRF
 * fetch too) carries a `traceparent` of the call.
 */
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { resetDownstreamClients } from '../../lib/delivery/downstreams.ts';
import { traceIdOf, watchSpans } from '../../lib/observability/tracing.ts';
import { createDownstreamHolds } from '../../lib/outage/hold.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import { type DeliveryStack, startDeliveryStack } from '../../testkit/deliveryStack.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { acceptSales, deliverAt, forgetHolds, OUTAGE, receive, secondsAfter } from './support.ts';

let stack: DeliveryStack;
const exporter = new InMemorySpanExporter();
let stopWatching: () => void;

beforeAll(async () => {
  stack = await startDeliveryStack();
  stopWatching = watchSpans(new SimpleSpanProcessor({ exporter }));
});
afterAll(async () => {
  stopWatching();
  await stack.stop();
});
beforeEach(async () => {
  await Promise.all([stack.aws.drain(stack.salesQueue), forgetHolds(stack.aws.dynamoEndpoint)]);
  resetDownstreamClients();
  exporter.reset();
});

const CLIENT_TRACE = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE}-1122334455667788-01`;

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("the worker's spans", () => {
  it('each attempt is a span of the record’s trace; the failed one is an error with SAP’s status', async () => {
    // Prepare
    const response = await salesHandler(
      jsonPost('/erp/sales_registration', [salesRegistrationInput({ FrameNum: uniqueFrame() })], {
        traceparent: CLIENT_TRACEPARENT,
      }),
      lambdaContext(),
    );
    const [{ id }] = JSON.parse(response.body).registrations;
    const { records } = await receive(stack.aws.sqs, stack.salesQueue, 1);
    const holds = createDownstreamHolds(OUTAGE);
    const firstRequest = stack.sap.requests.length;
    // Act: SAP down for the first attempt, back for the second (after the backoff and the lease)
    stack.sap.outage.setDown(true);
    const first = await deliverAt(records, holds, new Date());
    stack.sap.outage.setDown(false);
    const second = await deliverAt(records, holds, secondsAfter(new Date(), 600));
    // Assess
    expect([first, second]).toEqual([['DeliveryRetryLaterError'], ['done']]);
    expect((await getStatusRecord(id))?.status).toBe('delivered');
    const attempts = named('deliver salesRegistration');
    expect(attempts).toHaveLength(2);
    expect(attempts.map((span) => span.spanContext().traceId)).toEqual([CLIENT_TRACE, CLIENT_TRACE]);
    const intake = named('POST /erp/sales_registration').find(
      (span) => span.spanContext().traceId === CLIENT_TRACE,
    );
    expect(attempts.map(parentOf)).toEqual([intake?.spanContext().spanId, intake?.spanContext().spanId]);
    expect(attempts[0].status.code).toBe(2);
    expect(attempts[0].attributes['http.response.status_code']).toBe(503);
    expect(attempts[1].status.code).not.toBe(2);
    // The call of the first attempt failed whole: an error too, under its attempt
    const [failedCall] = named('erp call').filter(
      (span) => parentOf(span) === attempts[0].spanContext().spanId,
    );
    expect(failedCall.status.code).toBe(2);
    // Every request to SAP (the token fetch and the POSTs) joined the record's trace
    const sent = stack.sap.requests.slice(firstRequest);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.map((request) => traceIdOf(request.headers.traceparent as string))).toEqual(
      sent.map(() => CLIENT_TRACE),
    );
  });

  it('a $batch of 50 records is one span, linked to each record’s attempt, a child of none', async () => {
    // Prepare
    const ids = await acceptSales(50);
    const { records } = await receive(stack.aws.sqs, stack.salesQueue, 50);
    // Act
    const results = await deliverAt(records, createDownstreamHolds(OUTAGE), new Date());
    // Assess
    expect(results.every((result) => result === 'done')).toBe(true);
    const calls = named('erp call');
    expect(calls).toHaveLength(1);
    const [call] = calls;
    const attempts = named('deliver salesRegistration');
    expect(attempts.map((span) => span.attributes['record.id']).sort()).toEqual([...ids].sort());
    expect(call.links.map((link) => link.context.spanId).sort()).toEqual(
      attempts.map((span) => span.spanContext().spanId).sort(),
    );
    expect(parentOf(call)).toBeUndefined();
    expect(attempts.some((span) => span.spanContext().traceId === call.spanContext().traceId)).toBe(false);
    // The $batch request carries the call's own context
    const batch = named('SAP $batch');
    expect(batch).toHaveLength(1);
    expect(parentOf(batch[0])).toBe(call.spanContext().spanId);
  });
});
