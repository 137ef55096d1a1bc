/** The soak's report: a table for a person, and one JSON line for a machine. */
import type { SoakReport } from './campaign.ts';
import { OTHER_CLIENTS_DELAY_GOAL_SECONDS } from './slowReceiver.ts';

const row = (label: string, value: string | number) => `  ${label.padEnd(34)} ${String(value)}`;

const perCall = (records: number, calls: number) => (calls === 0 ? '-' : (records / calls).toFixed(1));

const flag = (value: number) => (value === 0 ? `${value}` : `${value}  <-- broken promise`);

/** The other clients' webhook delay while one receiver was slow, flagged above its goal. */
export const slowReceiverRow = (figures: SoakReport['slowReceiver']): string => {
  if (figures.from === null) return 'no slow receiver';
  if (figures.events === 0) return `no event of another client in the window  <-- no verdict`;
  const text = `${figures.p50Seconds} s p50, ${figures.p95Seconds} s p95, ${figures.maxSeconds} s max (${figures.events} events; goal p95 ${OTHER_CLIENTS_DELAY_GOAL_SECONDS} s)`;
  return figures.kept ? text : `${text}  <-- broken promise`;
};

/** Seconds to the first delivery after the outage against its goal, flagged above it. */
const firstDelivery = (report: SoakReport): string => {
  const {
    firstDeliverySeconds: at,
    firstDeliveryGoalSeconds: goal,
    probeCadenceSeconds,
    recoveredInTime,
  } = report.hold;
  const text = at === null ? 'none' : `${at} s`;
  return `${text} (goal ${goal} s: probe period + reconciler period, or the probe cadence kept (${probeCadenceSeconds} s) if longer, + the worker's batching window + the probe's call)${recoveredInTime ? '' : '  <-- later than the goal'}`;
};

/** Every delivered record's trace whole (traceWhole.ts): its figures, losses a SIGKILL explains apart. */
export const traceRows = (traces: SoakReport['traces']): string[] => {
  if (!traces) return [row('delivered records, traces checked', 'store unreadable  <-- no verdict')];
  const excused = traces.excusedByKill;
  return [
    row('delivered records, traces checked', `${traces.records} (${traces.spans} spans kept)`),
    row('  without their intake span', flag(traces.withoutIntakeSpan)),
    row('  without a delivery span', flag(traces.withoutDeliverySpan)),
    row('  orphan spans (parent not kept)', flag(traces.orphanSpans)),
    row(
      '  lost to a SIGKILL (excused)',
      `${excused.intakeSpans} intake, ${excused.deliverySpans} delivery, ${excused.orphanSpans} orphan spans`,
    ),
    row(
      '  lost to a timeout (excused, 504)',
      `${traces.excusedByTimeout.intakeSpans} intake, ${traces.excusedByTimeout.orphanSpans} orphan spans`,
    ),
    row("  intake spans in the client's trace", traces.joinedCallerTraces),
    ...traces.examples.map((example) => row('    e.g.', example)),
  ];
};

export const reportTable = (report: SoakReport): string => {
  const { records, violations } = report;
  const answers = Object.entries(report.answers)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, n]) => `${status === '0' ? 'no answer' : status}: ${n}`)
    .join(', ');
  const faults = (counts: Record<string, number>) =>
    Object.entries(counts)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ') || 'none';
  const lines = [
    `soak ${report.ok ? 'PASSED' : 'FAILED'}  (seed ${report.seed}, run ${report.run})`,
    row('requests (HTTP tries)', report.requests),
    row('plans (requests a client meant)', report.plans),
    row('answers by status', answers),
    row('records sent', records.sent),
    row('records accepted (answered 200)', records.accepted),
    row('  delivered exactly once', records.delivered),
    row('  rejected (with reason)', records.rejected),
    row('  failed (with reason)', records.failed),
    row('  lost', flag(records.lost)),
    row('  duplicated', flag(records.duplicated)),
    row('  stuck (status accepted)', flag(records.stuck)),
    row('  inconsistent (status vs downstream)', flag(records.inconsistent)),
    row('    of which sent again after a SIGKILL', records.repeatedAtKill),
    row('    of which sent again (answer lost)', records.repeated),
    row('  one content under 2+ ids', flag(records.secondIds)),
    row('unanswered records delivered once', records.deliveredUnanswered),
    row('unanswered records delivered twice+', flag(records.duplicatedUnanswered)),
    row('refused records delivered (leaked)', flag(records.leaked)),
    row('accepted, named by no answer', flag(records.stuckUnanswered)),
    row('key reused, other body, answered 200', flag(violations.keyReuseAccepted)),
    row('200 answers without ids', flag(violations.malformed200)),
    row('settled records owing an event', report.events.eventsExpected),
    row('  event of final state lost', flag(report.events.eventsLost)),
    row('  copies (at least once)', report.events.eventCopies),
    row('events leaked (no webhook)', flag(report.events.eventsLeaked)),
    row('webhook requests not verified (signature)', flag(report.events.eventsUnverified)),
    row('events with personal data', flag(report.events.eventsWithPersonalData)),
    row('events received in all', report.events.eventsReceived),
    row(
      'test records (test client)',
      `${report.testMode.testRecords}, ${report.testMode.testAsNamed} as named`,
    ),
    row('  requests of them at SAP or Salesforce', flag(report.testMode.testAtDownstream)),
    row('  in a dead-letter queue', flag(report.testMode.testDeadLettered)),
    row('  not ended as their names say', flag(report.testMode.testNotAsNamed)),
    row('  look-up not marked test', flag(report.testMode.testUnmarked)),
    row("others' webhooks, one receiver slow", slowReceiverRow(report.slowReceiver)),
    row('settled records the feed must list', report.feed.feedExpected),
    row('  final state missing from the feed', flag(report.feed.feedMismatched)),
    row('  feed entries of another client', flag(report.feed.feedForeign)),
    row(
      'items in the store at the end',
      report.indexes.unreadable === undefined
        ? report.indexes.items
        : `unreadable (${report.indexes.unreadable})  <-- no verdict`,
    ),
    row('  index entries missing', flag(report.indexes.missing)),
    row('  index entries of no such item', flag(report.indexes.extra)),
    row('  index entries projecting wrongly', flag(report.indexes.wrong)),
    ...traceRows(report.traces),
    row('200 → delivered, by client', 'p50, p99 (records)'),
    ...report.clients.map((times) =>
      row(
        `  ${times.client}, ${times.op}s`,
        `${(times.p50Ms / 1000).toFixed(1)} s, ${(times.p99Ms / 1000).toFixed(1)} s (${times.records})${times.flooding ? '  the flood' : ''}`,
      ),
    ),
    row(
      'SAP calls / records ($batch calls)',
      `${report.calls.sapCalls} / ${report.calls.sapRecords} (${report.calls.sapBatchCalls}), ${perCall(report.calls.sapRecords, report.calls.sapCalls)} per call`,
    ),
    row(
      'Salesforce calls / records (Collections)',
      `${report.calls.salesforceCalls} / ${report.calls.salesforceRecords} (${report.calls.salesforceCollectionsCalls}), ${perCall(report.calls.salesforceRecords, report.calls.salesforceCalls)} per call`,
    ),
    row('records sent to SAP / created', `${report.downstream.sapPosts} / ${report.downstream.sapCreated}`),
    row(
      'records sent to Salesforce / created',
      `${report.downstream.salesforceUpserts} / ${report.downstream.salesforceCreated}`,
    ),
    row(
      'SAP outage seconds',
      `${report.outage.seconds}${report.hold.outageFrom ? ` (${report.hold.outageFrom} to ${report.hold.outageTo})` : ''}`,
    ),
    row(
      '  calls while down / probes allowed',
      `${report.outage.calls} (delivery ${report.outage.deliveryCalls}) / ${report.outage.probesAllowed}${
        report.outage.calls > report.outage.probesAllowed ? '  <-- more than the probes allowed' : ''
      }`,
    ),
    row('  calls at (s into the outage)', report.outage.callSeconds.join(' ') || '-'),
    row('  records accepted during it', report.outage.acceptedDuring),
    row('  of which failed', flag(report.outage.failedDuring)),
    row(
      '  sales sent during it',
      `${report.hold.salesDuringOutage.alone} alone, ${report.hold.salesDuringOutage.together} requests of several`,
    ),
    row('first delivery after SAP came back', firstDelivery(report)),
    row(
      '  first delivery call after it',
      report.hold.firstCallSeconds === null
        ? '-'
        : `${report.hold.firstCallSeconds} s, answered ${report.hold.firstCallStatus || 'nothing'}`,
    ),
    row('holds opened while the downstream answered', flag(report.hold.openedWhileAnswering)),
    ...report.hold.openedWhileAnsweringAt.map((at) => row('  opened', at)),
    row('hold openings seen', faults(report.hold.openings)),
    row(
      '  by a call failed for every record',
      `${report.hold.openedOnFailures} (call not found: ${report.hold.unexplained})`,
    ),
    row(
      'npm start SIGKILLs / starts',
      `${report.restarts.kills} / ${report.restarts.starts} (unexpected exits ${report.restarts.unexpectedExits})`,
    ),
    row('intake faults, SQS', faults(report.faults.intakeSqs)),
    row('intake faults, DynamoDB', faults(report.faults.intakeDynamodb)),
    row('intake 5xx storms', report.faults.intakeStorms),
    row('worker/reconciler faults, SQS', faults(report.faults.deliverySqs)),
    row('worker/reconciler faults, DynamoDB', faults(report.faults.deliveryDynamodb)),
    row('worker/reconciler faults, bus', faults(report.faults.deliveryEventBridge)),
    row('downstream faults', faults(report.faults.downstream)),
    row(
      'seconds: traffic / quiet / look-ups / events',
      `${report.seconds.traffic} / ${report.seconds.drain}${report.drained ? '' : ' (bound or stall)'} / ${report.seconds.lookups} / ${report.seconds.events}`,
    ),
    row('seconds in all', report.seconds.total),
  ];
  const examples = Object.entries(report.examples);
  if (examples.length > 0) {
    lines.push('  examples:');
    for (const [kind, list] of examples) for (const item of list) lines.push(`    ${kind}: ${item}`);
  }
  if (report.dataDir) lines.push(row('data directory (kept)', report.dataDir));
  return lines.join('\n');
};

/** One line of JSON: the counts, without the examples. */
export const reportJson = (report: SoakReport): string => {
  const { examples: _examples, ...rest } = report;
  return JSON.stringify({ soak: rest });
};
