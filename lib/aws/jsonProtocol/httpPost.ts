import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AwsNetworkError } from './errors.ts';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One POST over `node:http(s)` with the global keep-alive agents. Not `fetch`: its undici would be loaded on the
 * first request, which is the cost this client exists to avoid.
 */
export const httpPost = (
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<HttpAnswer> =>
  new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => reject(new AwsNetworkError(error.message, { cause: error })));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    request.setTimeout(timeoutMs, () =>
      request.destroy(new AwsNetworkError(`no answer from ${url.host} within ${timeoutMs} ms`)),
    );
    request.on('error', (error) =>
      reject(error instanceof AwsNetworkError ? error : new AwsNetworkError(error.message, { cause: error })),
    );
    request.end(body);
  });
