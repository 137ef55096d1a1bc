/**
 * Local disabled webhooks: `<dataDir>/webhook-disabled.json` (`{"<client>": {"at", "status"}}`), as the records
 * table's `webhook#<client>` items on AWS. A `410 Gone` writes one; `npm run webhook-secret -- enable <client>`
 * removes it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WebhookDisabled, WebhookSwitch } from '../lib/webhooks/disabledWebhooks.ts';

const read = (file: string): Record<string, WebhookDisabled> =>
  existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, WebhookDisabled>) : {};

/**
 * The flags of a data directory (read on every question: another process, the command, may change them).
 *
 * @example
 * await fileWebhookSwitch('.data').enable('example-dealer') // true when it was disabled
 */
export const fileWebhookSwitch = (dataDir: string): WebhookSwitch => {
  const file = join(dataDir, 'webhook-disabled.json');
  const write = (flags: Record<string, WebhookDisabled>) => {
    mkdirSync(dataDir, { recursive: true });
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(flags, null, 2)}\n`);
    renameSync(temp, file);
  };
  return {
    disabled: async (client) => read(file)[client],
    async disable(client, reason) {
      write({ ...read(file), [client]: reason });
    },
    async enable(client) {
      const flags = read(file);
      if (!(client in flags)) return false;
      delete flags[client];
      write(flags);
      return true;
    },
  };
};
