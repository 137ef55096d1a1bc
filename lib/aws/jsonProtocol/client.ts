import {
  AwsNetworkError,
  AwsServiceError,
  abortError,
  errorCode,
  type ResponseMetadata,
  THROTTLING_CODES,
} from './errors.ts';
import { type HttpAnswer, httpPost } from './httpPost.ts';
import { type AwsCredentials, signRequest } from './signatureV4.ts';

/** What tells one JSON-protocol service from another. */
export interface JsonService {
  /** Signing name and endpoint prefix: `dynamodb`, `sqs`, `secretsmanager`. */
  name: string;
  /** The service's suffix of `AWS_ENDPOINT_URL_<ID>`, as the SDK reads it: `DYNAMODB`, `SECRETS_MANAGER`. */
  endpointEnvId: string;
  contentType: 'application/x-amz-json-1.0' | 'application/x-amz-json-1.1';
  /** `X-Amz-Target` is `<targetPrefix>.<operation>`. */
  targetPrefix: string;
  /** Headers every request carries (SQS: `x-amzn-query-mode`). */
  headers?: Record<string, string>;
  /** The error classes by code, so that `instanceof` works as with the SDK. */
  errors: Record<string, new (message?: string) => AwsServiceError>;
}

export interface JsonClientConfig {
  region?: string;
  /** Overrides the endpoint (otherwise `AWS_ENDPOINT_URL_<ID>`, `AWS_ENDPOINT_URL`, then the regional one). */
  endpoint?: string;
  credentials?: AwsCredentials;
  /** Attempts per call, the first included (the SDK's default: 3). */
  maxAttempts?: number;
  /**
   * Deadline of one attempt, from the start of its request until the whole answer is in (default 2 s). An attempt
   * that misses it is ended and counts as a lost connection (retried while attempts remain).
   */
  attemptTimeoutMs?: number;
}

/** The second argument of `send`, the SDK's `HttpHandlerOptions` (of which only the signal is supported). */
export interface JsonSendOptions {
  /**
   * Ends the call when it aborts, as with the SDK: the attempt under way is destroyed, no backoff or further
   * attempt follows, and `send` rejects with an error named `AbortError`. A caller's deadline for the whole call,
   * retries included, is `AbortSignal.timeout(ms)`.
   */
  abortSignal?: AbortSignal;
}

/** A request to an operation; the SDK's `new PutItemCommand(input)`. `Output` types what `send` resolves to. */
export class JsonCommand<
  Input extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
> {
  readonly operation: string;
  readonly input: Input;
  /** Types only: the answer's shape, for `send`. */
  declare readonly output?: Output;
  constructor(operation: string, input: Input) {
    this.operation = operation;
    this.input = input;
  }
}

/**
 * The command class of an operation (class names do not survive minification, so the name is kept as data),
 * typed with the SDK's input and output types of that operation.
 *
 * @example
 * export const GetItemCommand = jsonCommand<GetItemCommandInput, GetItemCommandOutput>('GetItem');
 */
export const jsonCommand = <
  Input extends object = Record<string, unknown>,
  Output extends object = Record<string, unknown>,
>(
  operation: string,
) =>
  class extends JsonCommand<Input, Output> {
    constructor(input: Input) {
      super(operation, input);
    }
  };

const DEFAULT_ATTEMPT_TIMEOUT_MS = 2_000;
const MAX_BACKOFF_MS = 20_000;

/**
 * Fields of an error answer that never land on the error (they would pass for its own, e.g. a `statusCode`, or
 * the product's `code` and `retryable` of lib/errors.ts).
 */
const NOT_COPIED = new Set([
  '__type',
  'message',
  'Message',
  'name',
  'stack',
  'cause',
  'code',
  'retryable',
  'statusCode',
  '$fault',
  '$metadata',
]);

/**
 * The backoff between attempts, cut short by the signal: an aborted call must not wait out a delay (up to 20 s)
 * that leads nowhere. The listener goes when the wait ends, so a long-lived signal does not collect them.
 */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Blobs travel as base64 in the JSON protocols. */
const jsonReplacer = (_key: string, value: unknown) =>
  value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value;

const header = (answer: HttpAnswer, name: string) => {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * A client for an AWS service that speaks the JSON protocol (awsJson1_0 / 1_1), with the SDK's shape:
 * `await client.send(new PutItemCommand(input))` resolves to the answer's fields plus `$metadata`, and rejects
 * with the service's error class. It signs with Signature V4, retries throttling, 5xx answers and lost
 * connections with capped exponential backoff and full jitter (the SDK's standard mode, without its retry quota),
 * and nothing more: no endpoint discovery, no streaming, no other protocols. Each attempt has a deadline
 * (`attemptTimeoutMs`); a whole call ends when the `abortSignal` passed to `send` aborts.
 *
 * @example
 * const dynamo = new DynamoDBClient({});
 * await dynamo.send(new PutItemCommand({ TableName: 'records', Item: item }));
 * // At most 3 s for the call, retries included; rejects with an error named 'AbortError' after that:
 * await dynamo.send(new GetItemCommand({ TableName: 'records', Key: key }), { abortSignal: AbortSignal.timeout(3_000) });
 */
export class JsonProtocolClient {
  protected readonly service: JsonService;
  readonly region: string;
  protected readonly endpoint: URL | undefined;
  private readonly credentials: AwsCredentials | undefined;
  private readonly maxAttempts: number;
  private readonly attemptTimeoutMs: number;

  constructor(service: JsonService, config: JsonClientConfig = {}, env = process.env) {
    this.service = service;
    const region = config.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
    if (!region) throw new Error(`${service.name}: no region (set AWS_REGION)`);
    this.region = region;
    const configured =
      config.endpoint ?? env[`AWS_ENDPOINT_URL_${service.endpointEnvId}`] ?? env.AWS_ENDPOINT_URL;
    this.endpoint = configured ? new URL(configured) : undefined;
    this.credentials = config.credentials;
    this.maxAttempts = Math.max(1, config.maxAttempts ?? 3);
    this.attemptTimeoutMs = config.attemptTimeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS;
  }

  /** Where a command goes: the configured endpoint, else the regional one. */
  protected endpointFor(_command: JsonCommand<object, object>): URL {
    if (this.endpoint) return this.endpoint;
    const domain = this.region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
    return new URL(`https://${this.service.name}.${this.region}.${domain}/`);
  }

  /** Checks a successful answer before it is returned (SQS: message checksums). */
  protected checkOutput(_command: JsonCommand<object, object>, _output: Record<string, unknown>): void {}

  /** The SDK clients' `destroy()`: nothing to release, the agents are shared. */
  destroy(): void {}

  /**
   * Sends a command, retrying as the class describes, and resolves to the answer's fields plus `$metadata`.
   * `options.abortSignal` ends the call (see {@link JsonSendOptions}).
   *
   * @example
   * const controller = new AbortController();
   * const pending = dynamo.send(new GetItemCommand({ TableName: 't', Key: key }), { abortSignal: controller.signal });
   * controller.abort();
   * await pending; // rejects: { name: 'AbortError', message: 'Request aborted' }
   */
  async send<Output extends object = Record<string, unknown>>(
    command: JsonCommand<object, Output>,
    options: JsonSendOptions = {},
  ): Promise<Output & { $metadata: ResponseMetadata }> {
    const { abortSignal } = options;
    const url = this.endpointFor(command);
    const body = JSON.stringify(command.input, jsonReplacer);
    const fixedHeaders = {
      'content-type': this.service.contentType,
      'x-amz-target': `${this.service.targetPrefix}.${command.operation}`,
      ...this.service.headers,
    };
    let totalRetryDelay = 0;
    for (let attempt = 1; ; attempt++) {
      // Checked before signing too: an aborted call starts no attempt.
      if (abortSignal?.aborted) throw abortError(abortSignal);
      const headers = await signRequest({
        method: 'POST',
        host: url.host,
        path: url.pathname || '/',
        headers: fixedHeaders,
        body,
        service: this.service.name,
        region: this.region,
        credentials: this.credentials ?? credentialsFromEnv(),
      });
      let failure: AwsServiceError | AwsNetworkError;
      try {
        const answer = await httpPost(url, headers, body, this.attemptTimeoutMs, abortSignal);
        const metadata: ResponseMetadata = {
          httpStatusCode: answer.status,
          requestId: header(answer, 'x-amzn-requestid'),
          attempts: attempt,
          totalRetryDelay,
        };
        if (answer.status >= 200 && answer.status < 300) {
          const output = parseOutput(answer.body, metadata);
          this.checkOutput(command, output);
          return output as Output & { $metadata: ResponseMetadata };
        }
        failure = this.serviceError(answer, metadata);
      } catch (error) {
        // An abort (not a network error) ends the call here, without a retry.
        if (!(error instanceof AwsNetworkError)) throw error;
        failure = error;
      }
      failure.$metadata = { ...failure.$metadata, attempts: attempt, totalRetryDelay };
      const throttled = failure instanceof AwsServiceError && THROTTLING_CODES.has(failure.name);
      if (attempt >= this.maxAttempts || !failure.retryable) throw failure;
      const delay = Math.random() * Math.min(MAX_BACKOFF_MS, (throttled ? 500 : 100) * 2 ** (attempt - 1));
      totalRetryDelay += delay;
      await sleep(delay, abortSignal);
    }
  }

  private serviceError(answer: HttpAnswer, metadata: ResponseMetadata): AwsServiceError {
    let fields: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(answer.body);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        fields = parsed as Record<string, unknown>;
    } catch {
      // Not JSON (a proxy's or load balancer's page): the status and the error-type header still say enough.
    }
    const type = String(fields.__type ?? header(answer, 'x-amzn-errortype') ?? `Http${answer.status}Error`);
    const code = errorCode(type);
    const message = String(fields.message ?? fields.Message ?? `${code} (HTTP ${answer.status})`);
    const ErrorClass = this.service.errors[code];
    const error = ErrorClass ? new ErrorClass(message) : new AwsServiceError(message, code);
    for (const [key, value] of Object.entries(fields)) {
      if (!NOT_COPIED.has(key)) error[key] = value;
    }
    error.$fault = answer.status >= 500 ? 'server' : 'client';
    error.$metadata = metadata;
    if (THROTTLING_CODES.has(code)) error.$retryable = { throttling: true };
    return error;
  }
}

const parseOutput = (body: string, metadata: ResponseMetadata): Record<string, unknown> => {
  try {
    const parsed: unknown = body ? JSON.parse(body) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { ...(parsed as Record<string, unknown>), $metadata: metadata };
    }
  } catch {
    // reported below
  }
  const error = new AwsServiceError('the answer is not a JSON object', 'DeserializationError');
  error.$metadata = metadata;
  throw error;
};

/** The function role's credentials, which Lambda puts in the environment. */
export const credentialsFromEnv = (env = process.env): AwsCredentials => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set');
  }
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
};
