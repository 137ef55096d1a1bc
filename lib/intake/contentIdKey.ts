import { ssmClient } from '../aws/clients.ts';
import { GetParameterCommand } from '../aws/jsonProtocol/ssm.ts';
import { type Environment, environment } from '../settings/environment.ts';

/** How long the key read from Parameter Store is reused before it is read again (a rotation takes effect). */
const KEY_MAX_AGE_MS = 300_000;

let cached: { parameter: string; at: number; key: Promise<string> } | undefined;

/** Reads the SecureString, decrypted; forgets a failed read, so the next request tries again. */
const readParameter = (parameter: string, now: number): Promise<string> => {
  const key = ssmClient()
    .send(new GetParameterCommand({ Name: parameter, WithDecryption: true }))
    .then((out) => {
      const value = out.Parameter?.Value;
      if (!value) throw new Error(`the content id key ${parameter} is empty`);
      return value;
    });
  cached = { parameter, at: now, key };
  key.catch(() => {
    if (cached?.key === key) cached = undefined;
  });
  return key;
};

/**
 * The stage's secret key of content ids (lib/intake/recordIds.ts, `contentId`), kept as the other secrets are: on
 * AWS an SSM SecureString named by `CONTENT_ID_KEY_PARAMETER` (the template holds only its name), read with the
 * service's own small SSM client and reused for 5 minutes; locally and in tests `CONTENT_ID_KEY` itself (`npm start`
 * makes one in its data directory, as it makes API keys). Without either the intake refuses to derive ids: an
 * unkeyed fallback would quietly bring back ids a guess can be checked against.
 *
 * @throws when neither is set, or the parameter cannot be read.
 * @example
 * const key = await contentIdKey(); // 'Jx0…' (the stage's secret)
 */
export const contentIdKey = async (env: Environment = environment(), now = Date.now()): Promise<string> => {
  if (env.CONTENT_ID_KEY) return env.CONTENT_ID_KEY;
  const parameter = env.CONTENT_ID_KEY_PARAMETER;
  if (!parameter) throw new Error('CONTENT_ID_KEY_PARAMETER (or CONTENT_ID_KEY locally) must be set');
  if (cached && cached.parameter === parameter && now - cached.at < KEY_MAX_AGE_MS) return cached.key;
  return readParameter(parameter, now);
};
