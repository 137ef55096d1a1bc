/** Signing a webhook as the Standard Webhooks specification (v1) says, with its reference library. */
import { Webhook } from 'standardwebhooks';

/** The three headers of a signed webhook. */
export interface SignatureHeaders {
  'webhook-id': string;
  /** Unix seconds of this attempt. */
  'webhook-timestamp': string;
  /** `v1,<base64>` per signing secret, space-separated (two while a secret is being rotated). */
  'webhook-signature': string;
}

/**
 * The signature headers of one attempt: each secret signs `<id>.<timestamp>.<body>` (HMAC-SHA256); no secret
 * travels in a header.
 *
 * @example
 * signWebhook({ id: webhookIdOf(event), body, secrets: ['whsec_…'], at: new Date() })
 * // { 'webhook-id': '…', 'webhook-timestamp': '1795000000', 'webhook-signature': 'v1,K5o…=' }
 */
export const signWebhook = (input: {
  id: string;
  body: string;
  secrets: readonly string[];
  at: Date;
}): SignatureHeaders => {
  if (input.secrets.length === 0) throw new Error('a webhook is signed with at least one secret');
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(Math.floor(input.at.getTime() / 1000)),
    'webhook-signature': input.secrets
      .map((secret) => new Webhook(secret).sign(input.id, input.at, input.body))
      .join(' '),
  };
};
