/**
 * The local runner loads a function's handler as serverless.yml names it (local/handlerEntry.ts): the
 * export of the named file, or a clear error naming the handler when there is none.
 */
import { describe, expect, it } from 'vitest';
import { handler as deliveryWorker } from '../../functions/deliveryWorker.ts';
import { loadHandler } from '../../local/handlerEntry.ts';

describe('a handler named by serverless.yml', () => {
  it('is the named export of the named file, the same function Lambda would invoke', async () => {
    // Act
    const loaded = await loadHandler('functions/deliveryWorker.handler');
    // Assess
    expect(loaded).toBe(deliveryWorker);
  });

  it('refuses a name that is not <file>.<export>, and an export that is not a function, naming the handler', async () => {
    await expect(loadHandler('functions/deliveryWorker')).rejects.toThrow(
      'serverless.yml: handler functions/deliveryWorker is not <file>.<export>',
    );
    await expect(loadHandler('functions/deliveryWorker.nothing')).rejects.toThrow(
      /handler functions\/deliveryWorker\.nothing: .*functions\/deliveryWorker\.ts exports no function nothing/,
    );
  });
});
