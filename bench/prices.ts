/**
 * AWS on-demand list prices for the cost model (bench/costModel.ts): region eu-west-1 (Europe, Ireland), USD,
 * first pricing tier, no free tier. Each price names the public page it is taken from. Prices change: check the
 * pages and update `PRICES_AS_OF` with the values.
 */

/** When these values were last taken from the pages named below. */
export const PRICES_AS_OF = '2026-11-22';

/**
 * How the values were checked on 2026-11-23. The AWS pricing pages themselves were not reachable from the build
 * machine; the values were compared with public summaries of them. Check the AWS pages before quoting a figure.
 */
export const PRICE_CHECKS = [
  'DynamoDB on-demand: $0.625 per million WRU and $0.125 per million RRU in us-east-1 after AWS halved on-demand prices in November 2024 (airbyte.com, DynamoDB pricing); eu-west-1 is $0.7069 / $0.1413 here, half the $1.4135 / $0.283 quoted before the cut (engineering-ed7.pages.dev)',
  'EventBridge: custom events $1.00 per million, API destinations $0.20 per million, "consistent across most commercial regions" (cloudburn.io, March 2026; factualminds.com, June 2026)',
  'not cross-checked: API Gateway, Lambda, SQS and CloudWatch values, as taken on 2026-11-22',
] as const;
export const PRICES_REGION = 'eu-west-1';

export interface Price {
  usd: number;
  /** What is billed, e.g. "per million requests". */
  per: string;
  /** The public page the value comes from. */
  source: string;
}

export const PRICES = {
  restApiRequest: {
    usd: 3.5 / 1e6,
    per: 'request (REST API, first 333 million a month)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
  },
  httpApiRequest: {
    usd: 1.11 / 1e6,
    per: 'request (HTTP API, first 300 million a month, metered per 512 KB)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    per: 'invocation',
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    per: 'GB-second (arm64, first 7.5 billion GB-s a month)',
    source: 'https://aws.amazon.com/lambda/pricing/',
  },
  sqsRequest: {
    usd: 0.4 / 1e6,
    per: 'request (standard queue; every 64 KiB chunk of a request is one request)',
    source: 'https://aws.amazon.com/sqs/pricing/',
  },
  dynamoWriteUnit: {
    usd: 0.7069 / 1e6,
    per: 'write request unit (on-demand, Standard table class; 1 KB)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  dynamoReadUnit: {
    usd: 0.1413 / 1e6,
    per: 'read request unit (on-demand, Standard table class; 4 KB strongly consistent)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  logsIngestedGb: {
    usd: 0.57,
    per: 'GB of CloudWatch Logs ingested (Standard log class)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  spansIngestedGb: {
    usd: 0.5,
    per: 'GB of spans ingested (CloudWatch Transaction Search, X-Ray OTLP endpoint; 1 % indexed as trace summaries at no charge; us-east-1 list price, not cross-checked for eu-west-1)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  logsStoredGbMonth: {
    usd: 0.03,
    per: 'GB-month of CloudWatch Logs stored (compressed)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  metricMonth: {
    usd: 0.3,
    per: 'custom metric a month (first 10,000; EMF metrics are custom metrics)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
  eventBridgeEvent: {
    usd: 1.0 / 1e6,
    per: 'custom event published (PutEvents; each 64 KB chunk of an entry is one event)',
    source: 'https://aws.amazon.com/eventbridge/pricing/',
  },
  apiDestinationInvocation: {
    usd: 0.2 / 1e6,
    per: 'API destination invocation (a webhook call, retries included)',
    source: 'https://aws.amazon.com/eventbridge/pricing/',
  },
  alarmMonth: {
    usd: 0.1,
    per: 'standard-resolution alarm a month',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
  },
} satisfies Record<string, Price>;
