import { getParameter } from '@aws-lambda-powertools/parameters/ssm';
import { type Environment, environment } from '../settings/environment.ts';

/** How long a secret read from Parameter Store is reused before it is read again (rotation takes effect). */
const SECRET_MAX_AGE_SECONDS = 300;

/**
 * The values of secret settings. On AWS the template never holds a secret: it sets `NAME_PARAMETER` to the name
 * of an SSM SecureString, read here at run time (decrypted, cached for 5 minutes by Powertools Parameters).
 * Locally and in tests `NAME` itself may be set and is used as it is.
 *
 * @example
 * const { ERP_PASSWORD } = await readSecrets(['ERP_PASSWORD']); // from ERP_PASSWORD_PARAMETER on AWS
 */
export const readSecrets = async (
  names: string[],
  env: Environment = environment(),
): Promise<Record<string, string | undefined>> => {
  const entries = await Promise.all(
    names.map(async (name) => {
      const parameter = env[`${name}_PARAMETER`];
      const value =
        env[name] || !parameter
          ? env[name]
          : await getParameter(parameter, { decrypt: true, maxAge: SECRET_MAX_AGE_SECONDS });
      return [name, value] as const;
    }),
  );
  return Object.fromEntries(entries);
};
