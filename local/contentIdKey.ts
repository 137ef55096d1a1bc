/** The local stage's key of content ids: `<dataDir>/content-id-key`, made once (as API keys are) and kept. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The local key of content ids (lib/intake/contentIdKey.ts reads it as `CONTENT_ID_KEY`): made on the first start,
 * read afterwards, so the same content keeps its id from one start to the next, as on a deployed stage. Deleting
 * the file is the local rotation: records keep their ids, only repeats of earlier content are no longer recognised.
 *
 * @example
 * const key = ensureLocalContentIdKey('.data'); // 'dev-…' (48 random bytes, base64url)
 */
export const ensureLocalContentIdKey = (dataDir: string): string => {
  const file = join(dataDir, 'content-id-key');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  }
  const key = `dev-${randomBytes(48).toString('base64url')}`;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
};
