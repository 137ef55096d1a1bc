/**
 * A client's webhook secrets: `whsec_` and the base64 of 24 to 64 random bytes (the Standard Webhooks form), and
 * while a secret is being rotated, the previous one beside it until the rotation window has passed.
 */
import { randomBytes } from 'node:crypto';
import type { Environment } from '../settings/environment.ts';
import { webhookRotationHours } from '../settings/settings.ts';

/** The prefix of every Standard Webhooks secret. */
export const SECRET_PREFIX = 'whsec_';
const MIN_BYTES = 24;
const MAX_BYTES = 64;
/** Standard base64 (the specification's), padded or not. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * A client's secrets as kept (in `.data/webhook-secrets.json` locally, in the client's Secrets Manager secret on
 * AWS): a plain `whsec_…` string, or during a rotation `{current, previous, rotatedAt}`.
 */
export type StoredWebhookSecret = string | { current: string; previous?: string; rotatedAt?: string };

/** A client's secrets, checked. */
export interface WebhookSecrets {
  current: string;
  /** The secret `current` replaced; it signs too until `rotatedAt` + the rotation window. */
  previous?: string;
  rotatedAt?: Date;
}

/** The rule every secret must meet, for error texts. */
const RULE = `must be ${SECRET_PREFIX} followed by the base64 of ${MIN_BYTES} to ${MAX_BYTES} bytes`;

/**
 * Why `value` is not a valid secret, or undefined when it is.
 *
 * @example
 * secretProblem('whsec_abc') // 'must be whsec_ followed by the base64 of 24 to 64 bytes'
 */
export const secretProblem = (value: unknown): string | undefined => {
  if (typeof value !== 'string' || !value.startsWith(SECRET_PREFIX)) return RULE;
  const encoded = value.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || (encoded.length % 4 !== 0 && encoded.includes('='))) return RULE;
  const bytes = Buffer.from(encoded, 'base64');
  if (bytes.length < MIN_BYTES || bytes.length > MAX_BYTES) return RULE;
  return undefined;
};

/**
 * A client's stored secrets, checked: throws naming the client and `where` when one is not a valid `whsec_` value.
 *
 * @example
 * parseWebhookSecrets('example-dealer', 'whsec_…', '.data/webhook-secrets.json') // { current: 'whsec_…' }
 */
export const parseWebhookSecrets = (client: string, stored: unknown, where: string): WebhookSecrets => {
  const fail = (what: string): never => {
    throw new Error(`${where}: the webhook secret of client "${client}" ${what}`);
  };
  if (typeof stored === 'string') {
    const problem = secretProblem(stored);
    return problem ? fail(problem) : { current: stored };
  }
  if (stored === null || typeof stored !== 'object' || Array.isArray(stored))
    return fail(`${RULE} (or {"current", "previous", "rotatedAt"} while rotating)`);
  const { current, previous, rotatedAt } = stored as Record<string, unknown>;
  const currentProblem = secretProblem(current);
  if (currentProblem) return fail(`(current) ${currentProblem}`);
  if (previous === undefined) return { current: current as string };
  const previousProblem = secretProblem(previous);
  if (previousProblem) return fail(`(previous) ${previousProblem}`);
  const at = typeof rotatedAt === 'string' ? new Date(rotatedAt) : undefined;
  if (!at || Number.isNaN(at.getTime())) return fail('(rotatedAt) must be an ISO 8601 time');
  return { current: current as string, previous: previous as string, rotatedAt: at };
};

/**
 * The stored form of a client's secrets (a plain string once no rotation is under way).
 *
 * @example
 * storedWebhookSecrets({ current: 'whsec_…' }) // 'whsec_…'
 */
export const storedWebhookSecrets = (secrets: WebhookSecrets): StoredWebhookSecret =>
  secrets.previous && secrets.rotatedAt
    ? { current: secrets.current, previous: secrets.previous, rotatedAt: secrets.rotatedAt.toISOString() }
    : secrets.current;

/**
 * A new random secret: `whsec_` and the base64 of 32 random bytes.
 *
 * @example
 * newWebhookSecret() // 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
 */
export const newWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/**
 * How long a replaced secret keeps signing beside the new one: WEBHOOK_ROTATION_HOURS, default 24.
 *
 * @example
 * rotationWindowMs({ WEBHOOK_ROTATION_HOURS: '1' }) // 3_600_000
 */
export const rotationWindowMs = (env?: Environment): number => webhookRotationHours(env) * 3_600_000;

/**
 * The secrets that sign now: the current one, and the previous one while the rotation window lasts.
 *
 * @example
 * signingSecrets({ current: 'whsec_new', previous: 'whsec_old', rotatedAt }, now, 86_400_000) // ['whsec_new', 'whsec_old']
 */
export const signingSecrets = (secrets: WebhookSecrets, now: Date, windowMs: number): string[] =>
  secrets.previous && secrets.rotatedAt && now.getTime() < secrets.rotatedAt.getTime() + windowMs
    ? [secrets.current, secrets.previous]
    : [secrets.current];

/**
 * The secrets after a rotation at `now`: a new current one, the old one kept as previous. A previous secret still
 * in its window is dropped (two rotations in a row: the oldest stops signing).
 *
 * @example
 * const rotated = rotateWebhookSecrets({ current: 'whsec_old' }, new Date()); // { current: 'whsec_…', previous: 'whsec_old', rotatedAt }
 */
export const rotateWebhookSecrets = (
  secrets: WebhookSecrets | undefined,
  now: Date,
  fresh: string = newWebhookSecret(),
): WebhookSecrets =>
  secrets ? { current: fresh, previous: secrets.current, rotatedAt: now } : { current: fresh };

/**
 * The secrets with a previous one whose window has passed forgotten (what `show` and a rewrite keep).
 *
 * @example
 * settledWebhookSecrets({ current, previous, rotatedAt: longAgo }, new Date(), 86_400_000) // { current }
 */
export const settledWebhookSecrets = (
  secrets: WebhookSecrets,
  now: Date,
  windowMs: number,
): WebhookSecrets =>
  signingSecrets(secrets, now, windowMs).length > 1 ? secrets : { current: secrets.current };
