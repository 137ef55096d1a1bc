/**
 * The soak's HTTP client: sends a plan's request as a careful client does, retrying network errors, 5xx, 429 and
 * 409 (an Idempotency-Key still in progress) with backoff and `Retry-After`, bounded in tries. While the service
 * is down (killed, starting again) it waits for it instead of spending tries.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Service } from './service.ts';
import { clientOf, type Plan, requestOf } from './workload.ts';

/** One HTTP exchange: its status (0: no answer, e.g. connection refused or cut) and, on 200, the record ids. */
export interface Answer {
  status: number;
  ids?: string[];
  /** Set when a 200 did not have the contract's shape. */
  malformed?: string;
  /** When it came (epoch ms; set by {@link sendWithRetries}): a 504 is the API function's timeout (traceWhole.ts). */
  at?: number;
}

export interface SendResult {
  answers: Answer[];
  /** The last answer: the one the client stays with. */
  final: Answer;
}

const RETRYABLE = new Set([0, 409, 429, 500, 502, 503, 504]);
const requestTimeoutMs = 30_000;

const idsOf = (plan: Plan, body: unknown): Pick<Answer, 'ids' | 'malformed'> => {
  if (plan.op === 'case') {
    const id = (body as { CrmId?: unknown } | null)?.CrmId;
    return typeof id === 'string' && id !== '' ? { ids: [id] } : { malformed: 'no CrmId' };
  }
  const registrations = (body as { registrations?: unknown } | null)?.registrations;
  if (!Array.isArray(registrations) || registrations.length !== plan.records.length) {
    return { malformed: 'registrations missing or of another length than the request' };
  }
  const ids: string[] = [];
  for (const [i, entry] of registrations.entries()) {
    const { id, FrameNum } = (entry ?? {}) as { id?: unknown; FrameNum?: unknown };
    if (typeof id !== 'string' || FrameNum !== plan.records[i].fields.FrameNum) {
      return { malformed: `registrations[${i}] is not the request's record ${i}` };
    }
    ids.push(id);
  }
  return { ids };
};

/** One try: never throws. */
export const sendOnce = async (service: Service, plan: Plan): Promise<Answer & { retryAfterMs?: number }> => {
  const request = requestOf(plan);
  try {
    const response = await fetch(`${service.url}${request.path}`, {
      method: 'POST',
      headers: {
        'content-type': request.contentType,
        'x-api-key': service.keys()[clientOf(plan)],
        ...request.headers,
      },
      body: request.body,
      signal: AbortSignal.timeout(requestTimeoutMs),
    });
    const text = await response.text();
    const retryAfter = Number(response.headers.get('retry-after'));
    const retryAfterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
    if (response.status !== 200) return { status: response.status, retryAfterMs };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { status: 200, malformed: 'not JSON' };
    }
    return { status: 200, ...idsOf(plan, body) };
  } catch {
    return { status: 0 };
  }
};

/**
 * Sends one request of `plan`, retrying as a careful client does, at most `maxTries` times.
 *
 * @example
 * const { final } = await sendWithRetries(service, plan, 6); // final.status 200 → final.ids
 */
export const sendWithRetries = async (
  service: Service,
  plan: Plan,
  maxTries: number,
): Promise<SendResult> => {
  const answers: Answer[] = [];
  for (let attempt = 1; ; attempt++) {
    await service.whenUp();
    const { retryAfterMs, ...answer } = await sendOnce(service, plan);
    answers.push({ ...answer, at: Date.now() });
    if (!RETRYABLE.has(answer.status) || attempt >= maxTries) return { answers, final: answer };
    const backoff = Math.min(4000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    await sleep(Math.min(5000, Math.max(backoff, retryAfterMs ?? 0)));
  }
};
