/**
 * The part of `@aws-sdk/client-sqs` the API functions use, over {@link JsonProtocolClient} (SQS's JSON protocol).
 * scripts/bundle.ts puts this module in place of the SDK package in those functions' bundles.
 */
import { createHash } from 'node:crypto';
import type {
  ChangeMessageVisibilityCommandInput,
  ChangeMessageVisibilityCommandOutput,
  DeleteMessageBatchCommandInput,
  DeleteMessageBatchCommandOutput,
  DeleteMessageCommandInput,
  DeleteMessageCommandOutput,
  GetQueueAttributesCommandInput,
  GetQueueAttributesCommandOutput,
  ReceiveMessageCommandInput,
  ReceiveMessageCommandOutput,
  SendMessageBatchCommandInput,
  SendMessageBatchCommandOutput,
  SendMessageCommandInput,
  SendMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import { type JsonClientConfig, type JsonCommand, JsonProtocolClient, jsonCommand } from './client.ts';
import { AwsServiceError, serviceErrorClass } from './errors.ts';

export const QueueDoesNotExist = serviceErrorClass('QueueDoesNotExist');
export const InvalidMessageContents = serviceErrorClass('InvalidMessageContents');
export const BatchEntryIdsNotDistinct = serviceErrorClass('BatchEntryIdsNotDistinct');
export const TooManyEntriesInBatchRequest = serviceErrorClass('TooManyEntriesInBatchRequest');

const sqs = {
  name: 'sqs',
  endpointEnvId: 'SQS',
  contentType: 'application/x-amz-json-1.0',
  targetPrefix: 'AmazonSQS',
  // As the SDK sends it: errors then also carry their query-protocol codes.
  headers: { 'x-amzn-query-mode': 'true' },
  errors: {
    QueueDoesNotExist,
    InvalidMessageContents,
    BatchEntryIdsNotDistinct,
    TooManyEntriesInBatchRequest,
  },
} as const;

const md5Hex = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');

interface SqsClientConfig extends JsonClientConfig {
  /** Send to the host of the command's `QueueUrl` when no endpoint is configured (the SDK's default: true). */
  useQueueUrlAsEndpoint?: boolean;
}

export class SQSClient extends JsonProtocolClient {
  private readonly useQueueUrlAsEndpoint: boolean;

  constructor(config: SqsClientConfig = {}) {
    const { useQueueUrlAsEndpoint = true, ...rest } = config;
    super(sqs, rest);
    this.useQueueUrlAsEndpoint = useQueueUrlAsEndpoint;
  }

  protected override endpointFor(command: JsonCommand<object, object>): URL {
    const queueUrl = (command.input as { QueueUrl?: unknown }).QueueUrl;
    if (
      !this.endpoint &&
      this.useQueueUrlAsEndpoint &&
      typeof queueUrl === 'string' &&
      URL.canParse(queueUrl)
    ) {
      return new URL('/', queueUrl);
    }
    return super.endpointFor(command);
  }

  /** As the SDK does: a message body whose MD5 SQS reports differently was damaged on the way. */
  protected override checkOutput(
    command: JsonCommand<object, object>,
    output: Record<string, unknown>,
  ): void {
    if (command.operation === 'SendMessage') {
      const { MessageBody } = command.input as { MessageBody?: string };
      if (MessageBody !== undefined) checkMd5(MessageBody, output.MD5OfMessageBody);
    }
    if (command.operation === 'SendMessageBatch') {
      const entries = (command.input as { Entries?: { Id: string; MessageBody: string }[] }).Entries ?? [];
      const sent = new Map(entries.map((entry) => [entry.Id, entry.MessageBody]));
      for (const result of (output.Successful ?? []) as { Id: string; MD5OfMessageBody?: string }[]) {
        const body = sent.get(result.Id);
        if (body !== undefined) checkMd5(body, result.MD5OfMessageBody);
      }
    }
  }
}

const checkMd5 = (body: string, reported: unknown) => {
  if (reported !== undefined && reported !== md5Hex(body)) {
    throw new AwsServiceError(
      'SQS reported another MD5 for a message body than was sent',
      'InvalidChecksumError',
    );
  }
};

export const ChangeMessageVisibilityCommand = jsonCommand<
  ChangeMessageVisibilityCommandInput,
  ChangeMessageVisibilityCommandOutput
>('ChangeMessageVisibility');
export const DeleteMessageBatchCommand = jsonCommand<
  DeleteMessageBatchCommandInput,
  DeleteMessageBatchCommandOutput
>('DeleteMessageBatch');
export const DeleteMessageCommand = jsonCommand<DeleteMessageCommandInput, DeleteMessageCommandOutput>(
  'DeleteMessage',
);
export const GetQueueAttributesCommand = jsonCommand<
  GetQueueAttributesCommandInput,
  GetQueueAttributesCommandOutput
>('GetQueueAttributes');
export const ReceiveMessageCommand = jsonCommand<ReceiveMessageCommandInput, ReceiveMessageCommandOutput>(
  'ReceiveMessage',
);
export const SendMessageBatchCommand = jsonCommand<
  SendMessageBatchCommandInput,
  SendMessageBatchCommandOutput
>('SendMessageBatch');
export const SendMessageCommand = jsonCommand<SendMessageCommandInput, SendMessageCommandOutput>(
  'SendMessage',
);
