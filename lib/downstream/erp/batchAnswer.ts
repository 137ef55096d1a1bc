import { parseMultipartMessage } from '@apeleghq/multipart-parser';
import { type EmbeddedResponse, parseEmbeddedResponse } from './embeddedHttp.ts';

/** What one change set's part of a `$batch` answer says, before classification. */
export type ChangeSetAnswer =
  | ({ kind: 'answered' } & EmbeddedResponse)
  | { kind: 'malformed'; error: string };

/** A `$batch` answer read part by part, or why it cannot be read at all. */
export type BatchAnswer = { ok: true; changeSets: ChangeSetAnswer[] } | { ok: false; error: string };

const BOUNDARY = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i;

/**
 * The boundary of a `multipart/mixed` Content-Type, or undefined for any other type.
 *
 * @example
 * multipartBoundary('multipart/mixed; boundary=batchresponse_1'); // 'batchresponse_1'
 * multipartBoundary('application/json'); // undefined
 */
export function multipartBoundary(contentType: string | null): string | undefined {
  if (!contentType || !/^\s*multipart\/mixed\s*;/i.test(contentType)) return undefined;
  const match = BOUNDARY.exec(contentType);
  return match?.[1] ?? match?.[2];
}

const isType = (headers: Headers, type: string): boolean =>
  (headers.get('content-type') ?? '').trim().toLowerCase().startsWith(type);

const embedded = (body: Uint8Array | null | undefined): ChangeSetAnswer => {
  const response = body ? parseEmbeddedResponse(body) : undefined;
  return response
    ? { kind: 'answered', ...response }
    : { kind: 'malformed', error: 'the change set answer is not an HTTP response' };
};

/**
 * Reads the `202` answer to a `$batch` request of `changeSetCount` change sets: one part per change set, in
 * order. A change set that succeeded answers a nested `multipart/mixed` holding its one `application/http`
 * response; one that failed answers a lone `application/http` part with the error (OData v2).
 *
 * Positions are all that ties a part to its registration, so an answer with more or fewer parts than change
 * sets, or one that cannot be parsed to its end (cut off, a boundary missing), is not read at all: `ok: false`,
 * and the caller treats every registration in it as not known to be delivered. A single unreadable part only
 * makes its own change set `malformed`.
 *
 * @example
 * const answer = await readBatchAnswer(response.headers.get('content-type'), bytes, 3);
 * if (answer.ok) answer.changeSets[0]; // { kind: 'answered', status: 201, headers, text: '{"d":{…}}' }
 */
export async function readBatchAnswer(
  contentType: string | null,
  body: Uint8Array,
  changeSetCount: number,
): Promise<BatchAnswer> {
  const boundary = multipartBoundary(contentType);
  if (!boundary) return { ok: false, error: 'the answer is not multipart/mixed' };
  const changeSets: ChangeSetAnswer[] = [];
  try {
    const stream = new Blob([body]).stream();
    for await (const part of parseMultipartMessage(stream, boundary)) {
      if (isType(part.headers, 'multipart/mixed') && part.parts) {
        // Every nested part is read, so the outer parser can go on past them.
        const inner: ChangeSetAnswer[] = [];
        for await (const operation of part.parts) {
          inner.push(
            isType(operation.headers, 'application/http')
              ? embedded(operation.body)
              : { kind: 'malformed', error: 'a change set answer part is not application/http' },
          );
        }
        changeSets.push(
          inner.length === 1
            ? inner[0]
            : { kind: 'malformed', error: `the change set answer holds ${inner.length} responses, not 1` },
        );
      } else if (isType(part.headers, 'application/http')) {
        changeSets.push(embedded(part.body));
      } else {
        changeSets.push({ kind: 'malformed', error: 'an answer part is neither a change set nor HTTP' });
      }
    }
  } catch {
    // The parser's own message is left out: it may quote the answer, which may quote personal data.
    return { ok: false, error: 'the multipart answer cannot be read to its end (cut off or malformed)' };
  }
  if (changeSets.length !== changeSetCount) {
    return {
      ok: false,
      error: `the answer has ${changeSets.length} parts for ${changeSetCount} change sets`,
    };
  }
  return { ok: true, changeSets };
}
