import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AwsNetworkError, abortError } from './errors.ts';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One POST over `node:http(s)` with the global keep-alive agents. Not `fetch`: its undici would be loaded on the
 * first request, which is the cost this client exists to avoid.
 *
 * `timeoutMs` is a deadline, not an idle timeout: it runs from the start of the request until the whole answer
 * body is in, so a server that trickles its answer a byte at a time cannot hold the call past it (an idle
 * timeout, `request.setTimeout`, restarts with every byte). When it passes, the request is destroyed and the
 * promise rejects with an {@link AwsNetworkError} (which the client retries). When `signal` aborts, the request
 * is destroyed and the promise rejects at once with an error named `AbortError` (which the client does not
 * retry); a signal that has already aborted sends nothing.
 *
 * @example
 * const answer = await httpPost(new URL('http://127.0.0.1:4566/'), headers, '{}', 2_000, AbortSignal.timeout(5_000));
 * answer.status; // 200
 */
export const httpPost = (
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HttpAnswer> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    // Whichever comes first (the answer, a failure, the deadline, the signal) settles the promise; the rest is
    // ignored, including the error events that destroying the request raises afterwards.
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (error: Error) => {
      settle(() => reject(error));
      // Also ends a response still streaming in, and takes its socket out of the keep-alive pool.
      request.destroy();
    };
    const onAbort = () => fail(abortError(signal));

    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => fail(new AwsNetworkError(error.message, { cause: error })));
        response.on('end', () =>
          settle(() =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          ),
        );
      },
    );
    const deadline = setTimeout(
      () => fail(new AwsNetworkError(`no complete answer from ${url.host} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) =>
      fail(error instanceof AwsNetworkError ? error : new AwsNetworkError(error.message, { cause: error })),
    );
    request.end(body);
  });
