import { BaseProvider } from '@aws-lambda-powertools/parameters/base';
import { secretsManagerClient } from '../aws/clients.ts';
import { GetSecretValueCommand } from '../aws/jsonProtocol/secretsManager.ts';

/**
 * Powertools Parameters' caching and transforms (`maxAge`, `transform: 'json'`) over the service's own Secrets
 * Manager client (lib/aws/clients.ts). Powertools' own SecretsProvider would load the AWS SDK's Secrets Manager
 * client into every API function's cold start (about 37 ms, more than the rest of the handler); this provider
 * reads the secret with the small JSON-protocol client instead, and imports only Powertools' BaseProvider.
 *
 * @example
 * const keys = await new SecretProvider().get('dealer-gateway/prod/api-keys', { transform: 'json', maxAge: 300 });
 */
export class SecretProvider extends BaseProvider {
  constructor() {
    super({ awsSdkV3Client: secretsManagerClient() });
  }

  /** The secret's text (binary secrets are not used here). */
  protected async _get(name: string): Promise<string | undefined> {
    const out = await secretsManagerClient().send(new GetSecretValueCommand({ SecretId: name }));
    return out.SecretString;
  }

  protected async _getMultiple(): Promise<Record<string, unknown> | undefined> {
    throw new Error('SecretProvider reads one secret at a time');
  }
}
