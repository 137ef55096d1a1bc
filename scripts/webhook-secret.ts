/**
 * `npm run webhook-secret -- <rotate|enable|show> [<client>] [--stage <stage>]`: rotates a client's webhook secret
 * (the old one signs too for WEBHOOK_ROTATION_HOURS), re-enables a webhook disabled by a 410, or shows them;
 * `resend --client <client> --record <id>` sends a record's last event again with the same webhook-id.
 * Locally in npm start's data directory, on AWS with --stage. See docs/operations.md, "Webhooks".
 */
import { runWebhookSecret } from '../tools/webhookSecret/run.ts';

process.exitCode = await runWebhookSecret(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
