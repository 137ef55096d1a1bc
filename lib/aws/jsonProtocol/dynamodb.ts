import type {
  BatchGetItemCommandInput,
  BatchGetItemCommandOutput,
  BatchWriteItemCommandInput,
  BatchWriteItemCommandOutput,
  DeleteItemCommandInput,
  DeleteItemCommandOutput,
  GetItemCommandInput,
  GetItemCommandOutput,
  PutItemCommandInput,
  PutItemCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  TransactWriteItemsCommandInput,
  TransactWriteItemsCommandOutput,
  UpdateItemCommandInput,
  UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
/**
 * The part of `@aws-sdk/client-dynamodb` the API functions use, over {@link JsonProtocolClient}. scripts/bundle.ts
 * puts this module in place of the SDK package in those functions' bundles (see bench/README.md, "Cold start").
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

export const BatchGetItemCommand = jsonCommand<BatchGetItemCommandInput, BatchGetItemCommandOutput>(
  'BatchGetItem',
);
export const BatchWriteItemCommand = jsonCommand<BatchWriteItemCommandInput, BatchWriteItemCommandOutput>(
  'BatchWriteItem',
);
export const DeleteItemCommand = jsonCommand<DeleteItemCommandInput, DeleteItemCommandOutput>('DeleteItem');
export const GetItemCommand = jsonCommand<GetItemCommandInput, GetItemCommandOutput>('GetItem');
export const PutItemCommand = jsonCommand<PutItemCommandInput, PutItemCommandOutput>('PutItem');
export const QueryCommand = jsonCommand<QueryCommandInput, QueryCommandOutput>('Query');
export const ScanCommand = jsonCommand<ScanCommandInput, ScanCommandOutput>('Scan');
export const TransactWriteItemsCommand = jsonCommand<
  TransactWriteItemsCommandInput,
  TransactWriteItemsCommandOutput
>('TransactWriteItems');
export const UpdateItemCommand = jsonCommand<UpdateItemCommandInput, UpdateItemCommandOutput>('UpdateItem');
