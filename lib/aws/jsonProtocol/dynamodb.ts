/**
 * The part of `@aws-sdk/client-dynamodb` the API functions use, over {@link JsonProtocolClient}. scripts/bundle.ts
 * puts this module in place of the SDK package in those functions' bundles (see README, "Cold start").
 */
import { type JsonClientConfig, JsonProtocolClient, jsonCommand } from './client.ts';
import { serviceErrorClass } from './errors.ts';

export const ConditionalCheckFailedException = serviceErrorClass('ConditionalCheckFailedException');
export const ResourceNotFoundException = serviceErrorClass('ResourceNotFoundException');
export const ProvisionedThroughputExceededException = serviceErrorClass(
  'ProvisionedThroughputExceededException',
);
export const TransactionCanceledException = serviceErrorClass('TransactionCanceledException');

const dynamodb = {
  name: 'dynamodb',
  endpointEnvId: 'DYNAMODB',
  contentType: 'application/x-amz-json-1.0',
  targetPrefix: 'DynamoDB_20120810',
  errors: {
    ConditionalCheckFailedException,
    ResourceNotFoundException,
    ProvisionedThroughputExceededException,
    TransactionCanceledException,
  },
} as const;

export class DynamoDBClient extends JsonProtocolClient {
  constructor(config: JsonClientConfig = {}) {
    super(dynamodb, config);
  }
}

export const BatchGetItemCommand = jsonCommand('BatchGetItem');
export const BatchWriteItemCommand = jsonCommand('BatchWriteItem');
export const DeleteItemCommand = jsonCommand('DeleteItem');
export const GetItemCommand = jsonCommand('GetItem');
export const PutItemCommand = jsonCommand('PutItem');
export const QueryCommand = jsonCommand('Query');
export const ScanCommand = jsonCommand('Scan');
export const TransactWriteItemsCommand = jsonCommand('TransactWriteItems');
export const UpdateItemCommand = jsonCommand('UpdateItem');
