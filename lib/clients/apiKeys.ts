import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type ApiKeysSource, apiKeysSource } from '../settings/settings.ts';
import { SecretProvider } from './secretProvider.ts';

/** How long the key list is reused before it is read again (a new or revoked key takes effect within it). */
const KEYS_MAX_AGE_SECONDS = 300;

type KeyList = Record<string, string>;
let localKeys: { at: number; keys: KeyList } | undefined;
let secrets: SecretProvider | undefined;
/** One provider (and its cache) per container, made on first use. */
const secretProvider = (): SecretProvider => {
  secrets ??= new SecretProvider();
  return secrets;
};

/**
 * The API keys by client name: from the Secrets Manager secret named by `API_KEYS_SECRET` on AWS (Powertools
 * Parameters, cached 5 minutes), or from the JSON file named by `API_KEYS_FILE` locally (re-read as often).
 */
export const loadApiKeys = async (source: ApiKeysSource = apiKeysSource()): Promise<KeyList> => {
  if (source.secret) {
    return (
      ((await secretProvider().get(source.secret, {
        transform: 'json',
        maxAge: KEYS_MAX_AGE_SECONDS,
      })) as KeyList | undefined) ?? {}
    );
  }
  if (source.file) {
    if (!localKeys || Date.now() - localKeys.at > KEYS_MAX_AGE_SECONDS * 1000) {
      localKeys = { at: Date.now(), keys: JSON.parse(await readFile(source.file, 'utf8')) as KeyList };
    }
    return localKeys.keys;
  }
  return {};
};

/** Forgets the locally cached key file (tests that rewrite it). */
export const forgetLocalKeys = (): void => {
  localKeys = undefined;
};

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The client whose key this is, compared in constant time (on digests, so lengths do not leak either).
 *
 * @example
 * clientOfKey(presented, await loadApiKeys()) // 'example-dealer' | undefined
 */
export const clientOfKey = (presented: string, keys: KeyList): string | undefined => {
  const wanted = digest(presented);
  let found: string | undefined;
  for (const [client, key] of Object.entries(keys)) {
    if (timingSafeEqual(digest(key), wanted)) found ??= client;
  }
  return found;
};
