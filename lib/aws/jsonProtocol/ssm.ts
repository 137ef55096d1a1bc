/**
 * The part of `@aws-sdk/client-ssm` the API functions use (the content id key, lib/intake/contentIdKey.ts), over
 * {@link JsonProtocolClient}: Powertools' SSM provider would load the AWS SDK's SSM client into the intake's cold
 * start. The workers keep Powertools Parameters (lib/delivery/secrets.ts).
 */
import type { GetParameterCommandInput, GetParameterCommandOutput } from '@aws-sdk/client-ssm';
import { type JsonClientConfig, JsonProtocolClient, jsonCommand } from './client.ts';
import { serviceErrorClass } from './errors.ts';

export const ParameterNotFound = serviceErrorClass('ParameterNotFound');

const ssm = {
  name: 'ssm',
  endpointEnvId: 'SSM',
  contentType: 'application/x-amz-json-1.1',
  targetPrefix: 'AmazonSSM',
  errors: { ParameterNotFound },
} as const;

export class SSMClient extends JsonProtocolClient {
  constructor(config: JsonClientConfig = {}) {
    super(ssm, config);
  }
}

export const GetParameterCommand = jsonCommand<GetParameterCommandInput, GetParameterCommandOutput>(
  'GetParameter',
);
