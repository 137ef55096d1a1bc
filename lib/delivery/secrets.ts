import { getParameter } from '@aws-lambda-powertools/parameters/ssm';

/** How long a secret read from Parameter Store is reused before it is read again (rotation takes effect). */
const SECRET_MAX_AGE_SECONDS = 300;

/**
 * The environment with secrets filled in. On AWS the template never holds a secret: it sets `NAME_PARAMETER`
 * to the name of an SSM SecureString, read here at run time (decrypted, cached for 5 minutes by Powertools
 * Parameters). Locally and in tests `NAME` itself may be set and is used as it is.
 *
 * @example
 * const env = await withSecrets(['ERP_PASSWORD']); // env.ERP_PASSWORD from ERP_PASSWORD_PARAMETER
 */
export const withSecrets = async (
  names: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<NodeJS.ProcessEnv> => {
  const filled: NodeJS.ProcessEnv = { ...env };
  await Promise.all(
    names.map(async (name) => {
      const parameter = env[`${name}_PARAMETER`];
      if (env[name] || !parameter) return;
      filled[name] = await getParameter(parameter, { decrypt: true, maxAge: SECRET_MAX_AGE_SECONDS });
    }),
  );
  return filled;
};
