import { randomUUID } from 'node:crypto';
import { parseMultipartMessage } from '@apeleghq/multipart-parser';
import { registrationProblem } from '../lib/simulators/sapRegistrationRules.ts';
import type { RegistrationBook } from './registrationBook.ts';
import type { SapFault, StoredRegistration } from './sapTypes.ts';
import type { Exchange, LoggedRequest } from './server.ts';

/** What the SAP sandbox lends its `$batch` handler. */
export interface SapBatchContext {
  /** Name of the entity set: the only relative URL a change set may POST to. */
  entitySetName: string;
  /** The registrations stored, by their keys. */
  book: RegistrationBook;
  /** The OData entity of a stored registration, as the single POST answers it. */
  entityOf(stored: StoredRegistration): Record<string, unknown>;
  hasValidToken(exchange: Exchange): boolean;
  /** The next queued fault aimed at `$batch` calls. */
  nextFault(): SapFault | undefined;
  /** Applies a fault's delay and answer; true when it answered (or dropped) the request. */
  applyFault(exchange: Exchange, fault: SapFault | undefined): Promise<boolean>;
  odataError(code: string, message: string): unknown;
}

/** One change set's answer: its HTTP status and JSON body. */
interface ChangeSetResult {
  status: number;
  body: unknown;
}

const CRLF = '\r\n';
const REASONS: Record<number, string> = { 201: 'Created', 400: 'Bad Request', 409: 'Conflict' };
const BOUNDARY = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i;

const boundaryOf = (contentType: string | null | undefined): string | undefined => {
  if (!contentType || !/^\s*multipart\/mixed\s*;/i.test(contentType)) return undefined;
  const match = BOUNDARY.exec(contentType);
  return match?.[1] ?? match?.[2];
};

/** An embedded HTTP request: request line, headers, an empty line, the body. */
const parseEmbeddedRequest = (
  bytes: Uint8Array | null | undefined,
): { method: string; target: string; body: string } | undefined => {
  const text = new TextDecoder().decode(bytes ?? new Uint8Array());
  const end = text.indexOf(`${CRLF}${CRLF}`);
  if (end === -1) return undefined;
  const match = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(text.slice(0, text.indexOf(CRLF)));
  return match ? { method: match[1], target: match[2], body: text.slice(end + 4) } : undefined;
};

const httpPart = ({ status, body }: ChangeSetResult): string =>
  [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    '',
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}`,
    'Content-Type: application/json',
    '',
    JSON.stringify(body),
  ].join(CRLF);

/**
 * The `202` body SAP Gateway answers: a change set that succeeded as a nested `multipart/mixed` holding its
 * response, one that failed as a lone `application/http` part with the error (OData v2).
 */
const batchAnswer = (boundary: string, results: ChangeSetResult[]): string => {
  const parts = results.map((result) => {
    if (result.status >= 400) return httpPart(result);
    const changeSet = `changesetresponse_${randomUUID()}`;
    return [
      `Content-Type: multipart/mixed; boundary=${changeSet}`,
      '',
      `--${changeSet}`,
      httpPart(result),
      `--${changeSet}--`,
    ].join(CRLF);
  });
  return `${parts.map((part) => `--${boundary}${CRLF}${part}${CRLF}`).join('')}--${boundary}--${CRLF}`;
};

/**
 * Starts a handler for `POST {service root}/$batch` (docs/behaviour.md#batching): CSRF required as for the single
 * POST, one change set per registration, each holding one
 * `POST <entity set>` judged by the same rules (sapRegistrationRules.ts) and stored on its own; a RegistrationId
 * already stored answers `409` naming it. The answer is `202` with one part per change set, in order.
 * Faults `{ on: 'batch' }` apply to the whole call; `dropAnswer` stores everything, then closes the connection;
 * `recordErrors` refuses the change sets at those positions, unprocessed, unless the RegistrationId is already
 * stored (SAP does not refuse content it has taken: the repeat is answered 409).
 *
 * @example
 * const batch = sapBatchHandler(context);
 * if (exchange.method === 'POST' && target === `${serviceRoot}/$batch`) return batch(exchange);
 */
export function sapBatchHandler(context: SapBatchContext): (exchange: Exchange) => Promise<void> {
  const badRequest = (message: string): ChangeSetResult => ({
    status: 400,
    body: context.odataError('/IWFND/CM_MGW/004', message),
  });

  const alreadyStored = (changeSet: { entity: unknown } | ChangeSetResult): boolean => {
    if (!('entity' in changeSet) || typeof changeSet.entity !== 'object' || changeSet.entity === null)
      return false;
    const id = (changeSet.entity as { RegistrationId?: unknown }).RegistrationId;
    return context.book.withId(id) !== undefined;
  };
  const create = (entity: unknown): ChangeSetResult => {
    if (typeof entity !== 'object' || entity === null || Array.isArray(entity)) {
      return badRequest('The request body is not a valid JSON entity');
    }
    const record = entity as Record<string, unknown>;
    const problem = registrationProblem(record);
    if (problem) return { status: 400, body: context.odataError('ZSD_REG/001', problem) };
    const repeat = context.book.withId(record.RegistrationId);
    if (repeat) {
      const message = `RegistrationId ${repeat.RegistrationId} already registered as document ${repeat.DocumentNumber}`;
      return { status: 409, body: context.odataError('ZSD_REG/004', message) };
    }
    const sameFrame = context.book.withFrame(record.FrameNum);
    if (sameFrame) {
      const message = `Frame number ${sameFrame.FrameNum} is already registered (document ${sameFrame.DocumentNumber})`;
      return { status: 409, body: context.odataError('ZSD_REG/003', message) };
    }
    const stored: StoredRegistration = {
      DocumentNumber: context.book.nextDocumentNumber(),
      RegistrationId: record.RegistrationId as string,
      FrameNum: record.FrameNum as string,
      entity: record,
      createdAt: new Date().toISOString(),
    };
    context.book.add(stored);
    return { status: 201, body: { d: context.entityOf(stored) } };
  };

  /** One change set: exactly one POST to the entity set (its entity), or why not. */
  const readChangeSet = async (part: {
    headers: Headers;
    parts?: AsyncGenerator<{ headers: Headers; body?: Uint8Array | null }> | null;
  }): Promise<ChangeSetResult | { entity: unknown }> => {
    if (!boundaryOf(part.headers.get('content-type')) || !part.parts) {
      return badRequest('Only change sets are supported in this $batch');
    }
    const operations: (ReturnType<typeof parseEmbeddedRequest> | 'not http')[] = [];
    for await (const operation of part.parts) {
      const isHttp = (operation.headers.get('content-type') ?? '').startsWith('application/http');
      operations.push(isHttp ? parseEmbeddedRequest(operation.body) : 'not http');
    }
    const [operation] = operations;
    if (operations.length !== 1 || operation === 'not http' || !operation) {
      return badRequest('A change set must hold exactly one HTTP request');
    }
    if (operation.method !== 'POST' || operation.target.split('?')[0] !== context.entitySetName) {
      return badRequest(`Resource not found for segment ${operation.target}`);
    }
    try {
      return { entity: JSON.parse(operation.body) };
    } catch {
      return { entity: undefined };
    }
  };

  return async (exchange) => {
    const fault = context.nextFault();
    if (await context.applyFault(exchange, fault)) return;
    if (!context.hasValidToken(exchange)) {
      exchange.reply(403, 'CSRF token validation failed', { 'x-csrf-token': 'Required' });
      return;
    }
    const boundary = boundaryOf(exchange.headers['content-type']);
    if (!boundary) {
      exchange.reply(400, context.odataError('/IWFND/CM_MGW/004', 'Content-Type must be multipart/mixed'));
      return;
    }
    const changeSets: (ChangeSetResult | { entity: unknown })[] = [];
    try {
      const stream = new Blob([exchange.body]).stream();
      for await (const part of parseMultipartMessage(stream, boundary))
        changeSets.push(await readChangeSet(part));
    } catch {
      // Nothing is half-stored by a syntax error: SAP parses the whole request before it processes any of it.
      exchange.reply(
        400,
        context.odataError('/IWFND/CM_MGW/004', 'The $batch request is not valid multipart'),
      );
      return;
    }
    // Each change set on its own, in order: a refused one rolls back only itself.
    const results = changeSets.map((changeSet, index): ChangeSetResult => {
      // A refusal of content SAP has already taken under this RegistrationId cannot happen: the repeat is a 409.
      const refused = alreadyStored(changeSet) ? undefined : fault?.recordErrors?.[index];
      if (refused)
        return { status: refused.status, body: context.odataError('ZSD_REG/001', refused.message) };
      return 'entity' in changeSet ? create(changeSet.entity) : changeSet;
    });
    if (fault?.dropAnswer) {
      exchange.drop();
      return;
    }
    const answerBoundary = `batchresponse_${randomUUID()}`;
    exchange.reply(202, batchAnswer(answerBoundary, results), {
      'content-type': `multipart/mixed; boundary=${answerBoundary}`,
    });
  };
}

/** A delivery call the SAP sandbox received, for `/_sandbox/calls`. */
export interface SapDeliveryCall {
  kind: 'post' | 'batch';
  status: number;
  /** Registrations the call carried: 1 for a single POST, one per change set for a `$batch`. */
  registrations: number;
}

/**
 * The single POSTs and `$batch` calls among the requests a SAP sandbox received, in order: what a person
 * watching `GET /_sandbox/calls` sees of batching.
 *
 * @example
 * sapDeliveryCalls(sap.requests, sap.servicePath); // [{ kind: 'batch', status: 202, registrations: 50 }, …]
 */
export function sapDeliveryCalls(requests: readonly LoggedRequest[], servicePath: string): SapDeliveryCall[] {
  const batchPath = `${servicePath.slice(0, servicePath.lastIndexOf('/'))}/$batch`;
  return requests.flatMap(({ method, path, status, body }): SapDeliveryCall[] => {
    const target = path.split('?')[0].replace(/\/+$/, '');
    if (method !== 'POST') return [];
    if (target === servicePath) return [{ kind: 'post', status, registrations: 1 }];
    if (target !== batchPath) return [];
    // Each change set declares its own multipart/mixed type inside the body.
    const changeSets = body.match(/^content-type:\s*multipart\/mixed/gim)?.length ?? 0;
    return [{ kind: 'batch', status, registrations: changeSets }];
  });
}
