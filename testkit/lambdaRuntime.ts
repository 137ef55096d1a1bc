/**
 * The child side of testkit/lambdaProcesses.ts: one function's deployed code in a Node process of its
 * own, as a Lambda execution environment holds it. The module is imported once (the init phase), then every
 * invocation arrives over IPC and is answered with the handler's result or error, one at a time.
 *
 * Run by Node itself (type stripping), never by vitest: argv is the bundle entry, the export, the deployed
 * function name and its timeout in seconds.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

type Handler = (event: unknown, context: unknown) => Promise<unknown>;

const [entry, exportName, functionName, timeoutSeconds] = process.argv.slice(2);
const send = (message: unknown) =>
  new Promise<void>((resolve) => {
    if (!process.send) throw new Error('lambdaRuntime.ts runs only as a forked child');
    process.send(message, () => resolve());
  });

let handler: Handler;
try {
  handler = (await import(pathToFileURL(entry).href))[exportName] as Handler;
  if (typeof handler !== 'function') throw new Error(`${entry} exports no function ${exportName}`);
} catch (error) {
  await send({ initError: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.disconnect();
  process.exitCode = 1;
  throw error;
}

process.on('message', async (message: { id: number; event: unknown }) => {
  const started = Date.now();
  const requestId = randomUUID();
  const context = {
    awsRequestId: requestId,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION}:123456789012:function:${functionName}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '512',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${requestId.replaceAll('-', '')}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Number(timeoutSeconds) * 1000 - (Date.now() - started),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const result = await handler(message.event, context);
    await send({ id: message.id, result: result ?? null });
  } catch (error) {
    const { name, message: text } = error instanceof Error ? error : new Error(String(error));
    await send({ id: message.id, error: { name, message: text } });
  }
});

await send({ ready: true });
