/**
 * The part of `@aws-sdk/client-secrets-manager` that Powertools' `getSecret` uses (reading the API keys), over
 * {@link JsonProtocolClient}. scripts/bundle.ts puts this module in place of the SDK package in the API functions'
 * bundles. A `SecretBinary` stays base64 (the SDK decodes it); the key list is a `SecretString`.
 */
import type {
  GetSecretValueCommandInput,
  GetSecretValueCommandOutput,
} from '@aws-sdk/client-secrets-manager';
import { type JsonClientConfig, JsonProtocolClient, jsonCommand } from './client.ts';
import { serviceErrorClass } from './errors.ts';

export const ResourceNotFoundException = serviceErrorClass('ResourceNotFoundException');
export const DecryptionFailure = serviceErrorClass('DecryptionFailure');

const secretsManager = {
  name: 'secretsmanager',
  endpointEnvId: 'SECRETS_MANAGER',
  contentType: 'application/x-amz-json-1.1',
  targetPrefix: 'secretsmanager',
  errors: { ResourceNotFoundException, DecryptionFailure },
} as const;

export class SecretsManagerClient extends JsonProtocolClient {
  constructor(config: JsonClientConfig = {}) {
    super(secretsManager, config);
  }
}

export const GetSecretValueCommand = jsonCommand<GetSecretValueCommandInput, GetSecretValueCommandOutput>(
  'GetSecretValue',
);
