/**
 * The local Secrets Manager: answers GetSecretValue (AWS_ENDPOINT_URL_SECRETS_MANAGER points here) with the
 * secrets npm start keeps in its data directory, so that a function reading its secret from Secrets Manager on
 * AWS (the webhook dispatcher, lib/webhooks/awsSecrets.ts) runs unchanged under npm start.
 */
import { randomUUID } from 'node:crypto';
import { AwsJsonError, type AwsJsonServer, startAwsJsonServer } from './awsJsonServer.ts';
import { LOCAL_ACCOUNT } from './eventBus.ts';
import { localRegion } from './project.ts';

/** A secret's text by its name (SecretId), or undefined when there is none. */
export type SecretText = (name: string) => string | undefined;

/**
 * Starts answering GetSecretValue from `secretOf` (read at every call: a rotation reaches the next read).
 *
 * @example
 * const secrets = await startLocalSecretsManager((name) => (name === 'a' ? 'value' : undefined));
 * // AWS_ENDPOINT_URL_SECRETS_MANAGER=secrets.url
 */
export const startLocalSecretsManager = async (secretOf: SecretText): Promise<AwsJsonServer> =>
  startAwsJsonServer('local Secrets Manager', {
    'secretsmanager.GetSecretValue': async (request) => {
      const name = typeof request.SecretId === 'string' ? request.SecretId : '';
      const text = secretOf(name);
      if (text === undefined)
        throw new AwsJsonError(
          'ResourceNotFoundException',
          "Secrets Manager can't find the specified secret.",
        );
      return {
        ARN: `arn:aws:secretsmanager:${localRegion}:${LOCAL_ACCOUNT}:secret:${name}-local`,
        Name: name,
        SecretString: text,
        VersionId: randomUUID(),
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
      };
    },
  });
