/** Types the SAP sandbox's modules share (sapSandbox.ts, sapBatch.ts, registrationBook.ts): in a file of their own, so none imports another in a circle. */

/**
 * A fault for the next matching request; queued faults are used up in order, one per request.
 * Without `status`, `dropConnection` or `csrfExpired`, the request is processed normally after `delayMs`
 * (so a delayed registration is stored even when the client has given up, as a slow ERP would).
 */
export interface SapFault {
  /** `post` (default): the next delivery POST; `csrf`: the next token fetch; `batch`: the next `$batch` call. */
  on?: 'post' | 'csrf' | 'batch';
  /** Answer this status with an OData error body instead of processing. */
  status?: number;
  /** `error.message.value` of that answer. */
  message?: string;
  /** Extra answer headers. */
  headers?: Record<string, string>;
  /** Wait this long before answering (longer than the client's timeout simulates a hung ERP). */
  delayMs?: number;
  /** Answer a non-JSON body: with `status`, instead of the OData error; without, after storing the record. */
  malformedBody?: boolean;
  /** Expire every CSRF token first, so this POST gets 403 `X-CSRF-Token: Required`. */
  csrfExpired?: boolean;
  /** Close the connection without an answer (nothing is stored). */
  dropConnection?: boolean;
  /** `$batch` only: process the call (store what it creates), then close the connection: a lost answer. */
  dropAnswer?: boolean;
  /** `$batch` only: the change sets at these positions answer this status and message, unprocessed (e.g. a 400 refusal). */
  recordErrors?: Record<number, { status: number; message: string }>;
  /** A single POST: process the request, then close the connection instead of answering (the answer is lost). */
  loseAnswer?: boolean;
}

export interface StoredRegistration {
  DocumentNumber: string;
  RegistrationId: string;
  FrameNum: string;
  /** The entity as posted. */
  entity: Record<string, unknown>;
  createdAt: string;
}
