/**
 * The worker's tracing overhead per batch, in isolation: the spans a batch of 10 sales makes
 * (lib/delivery/deliverBatch.ts: one attempt span a record, the batch's downstream call linked to all of them with
 * its CSRF and POST client spans, one events publication a record), then the flush its handler makes before it
 * returns, exporting them signed (TRACES_EXPORT=xray) to a sink in another process. CPU of this process per batch,
 * median of blocks; `off` makes the same spans and exports none.
 *
 * `node bench/tracingBatchSpans.ts` prints `{ onUsPerBatch, offUsPerBatch, spansPerBatch }` (bench/tracing.ts runs it
 * when bench/workerThroughput.ts cannot).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { median } from './proc.ts';

const sinkCode = `
const server = require('node:http').createServer((q, r) => { q.resume(); q.on('end', () => r.writeHead(200, { 'content-type': 'application/json' }).end('{}')); });
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;

const measure = async (mode: 'on' | 'off', port: number) => {
  Object.assign(process.env, {
    TRACES_EXPORT: mode === 'on' ? 'xray' : 'off',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
  });
  const { resetSettings } = await import('../lib/settings/environment.ts');
  resetSettings();
  const { flushSpans, inSpan, startSpan, traceparentOfSpan, withActiveSpan } = await import(
    '../lib/observability/tracing.ts'
  );
  const batch = async () => {
    const intake = startSpan('POST /erp/sales_registration', { kind: 'server' });
    const parent = traceparentOfSpan(intake);
    intake.end();
    const attempts = Array.from({ length: 10 }, () =>
      startSpan('deliver salesRegistration', { parent, kind: 'consumer' }),
    );
    await inSpan(
      'erp call',
      { root: true, links: attempts.map(traceparentOfSpan), kind: 'client' },
      async () => {
        await inSpan('SAP CSRF token', { kind: 'client' }, async (span) => {
          span.setAttribute('http.response.status_code', 200);
        });
        await inSpan('SAP POST', { kind: 'client' }, async (span) => {
          span.setAttribute('http.response.status_code', 201);
        });
      },
    );
    for (const attempt of attempts) {
      await withActiveSpan(attempt, () => inSpan('publish events', {}, async () => {}));
      attempt.end();
    }
    await flushSpans();
  };
  for (let i = 0; i < 50; i++) await batch();
  const perBlock: number[] = [];
  for (let block = 0; block < 10; block++) {
    const before = process.cpuUsage();
    for (let i = 0; i < 20; i++) await batch();
    const used = process.cpuUsage(before);
    perBlock.push((used.user + used.system) / 20);
  }
  return median(perBlock);
};

const sink = spawn(process.execPath, ['-e', sinkCode], { stdio: ['ignore', 'pipe', 'inherit'] });
const [line] = (await once(sink.stdout, 'data')) as [Buffer];
const port = Number(line.toString().trim());
try {
  // Export on first: the exporter chunk, once loaded, stays (the module keeps one per process, as a Lambda does).
  const offUsPerBatch = await measure('off', port);
  const onUsPerBatch = await measure('on', port);
  // 10 attempts, the batch's call with its 2 requests, 10 publications, and the intake span.
  console.log(JSON.stringify({ onUsPerBatch, offUsPerBatch, spansPerBatch: 24 }));
} finally {
  sink.kill();
}
