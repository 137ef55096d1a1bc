/**
 * The part of `@aws-sdk/client-eventbridge` the service uses (publishing record events), over
 * {@link JsonProtocolClient} (EventBridge's JSON 1.1 protocol).
 */
import type { PutEventsCommandInput, PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { type JsonClientConfig, JsonProtocolClient, jsonCommand } from './client.ts';
import { serviceErrorClass } from './errors.ts';

export const ResourceNotFoundException = serviceErrorClass('ResourceNotFoundException');
export const InternalException = serviceErrorClass('InternalException');

const eventBridge = {
  name: 'events',
  endpointEnvId: 'EVENTBRIDGE',
  contentType: 'application/x-amz-json-1.1',
  targetPrefix: 'AWSEvents',
  errors: { ResourceNotFoundException, InternalException },
} as const;

export class EventBridgeClient extends JsonProtocolClient {
  constructor(config: JsonClientConfig = {}) {
    super(eventBridge, config);
  }
}

export const PutEventsCommand = jsonCommand<PutEventsCommandInput, PutEventsCommandOutput>('PutEvents');
