import { randomUUID } from 'node:crypto';
import { encodeMultipartMessage } from '@apeleghq/multipart-parser';

/** A `$batch` request body with the Content-Type header that names its boundary. */
export interface BatchRequest {
  contentType: string;
  body: Uint8Array;
}

const CRLF = '\r\n';

/** The embedded `POST <entity set>` of one change set, as SAP Gateway reads it. */
const embeddedPost = (entitySetName: string, json: string): Uint8Array =>
  new TextEncoder().encode(
    [
      `POST ${entitySetName} HTTP/1.1`,
      'Content-Type: application/json',
      'Accept: application/json',
      `Content-Length: ${Buffer.byteLength(json)}`,
      '',
      json,
    ].join(CRLF),
  );

/**
 * Builds an OData v2 `$batch` body with one change set per entity, each holding one `POST <entity set>` with
 * that JSON body (CONTRACT section 3, ERP, "Several registrations in one call"). One change set each, so a
 * refused registration rolls back only itself. Boundaries are random UUIDs: no JSON body can contain them.
 *
 * @example
 * const request = await buildBatchRequest('SalesRegistrationSet', ['{"FrameNum":"F1"}', '{"FrameNum":"F2"}']);
 * request.contentType; // 'multipart/mixed; boundary=batch_5c1f…'
 */
export async function buildBatchRequest(
  entitySetName: string,
  jsonBodies: readonly string[],
): Promise<BatchRequest> {
  const boundary = `batch_${randomUUID()}`;
  const changeSets = jsonBodies.map((json) => ({
    headers: new Headers({ 'Content-Type': `multipart/mixed; boundary=changeset_${randomUUID()}` }),
    parts: [
      {
        headers: new Headers({ 'Content-Type': 'application/http', 'Content-Transfer-Encoding': 'binary' }),
        body: embeddedPost(entitySetName, json),
      },
    ],
  }));
  const chunks: Uint8Array[] = [];
  for await (const chunk of encodeMultipartMessage(boundary, changeSets)) chunks.push(new Uint8Array(chunk));
  return { contentType: `multipart/mixed; boundary=${boundary}`, body: Buffer.concat(chunks) };
}
