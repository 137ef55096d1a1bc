/**
 * The part of CloudWatch the console's "Activity" page reads (GetMetricData), over {@link JsonProtocolClient}:
 * CloudWatch speaks the AWS JSON 1.0 protocol (target prefix `GraniteServiceVersion20100801`) besides its query
 * protocol, so the service's one small client serves it and the console function loads no AWS SDK client. Times go
 * as the JSON protocol sends them: epoch seconds.
 */
import { type JsonClientConfig, JsonProtocolClient, jsonCommand } from './client.ts';

const cloudWatch = {
  name: 'monitoring',
  endpointEnvId: 'CLOUDWATCH',
  contentType: 'application/x-amz-json-1.0',
  targetPrefix: 'GraniteServiceVersion20100801',
  errors: {},
} as const;

export class CloudWatchClient extends JsonProtocolClient {
  constructor(config: JsonClientConfig = {}) {
    super(cloudWatch, config);
  }
}

/** One metric's statistic per period (the only query shape the console makes). */
export interface MetricStatQuery {
  Id: string;
  MetricStat: {
    Metric: { Namespace: string; MetricName: string; Dimensions: { Name: string; Value: string }[] };
    Period: number;
    Stat: string;
  };
  ReturnData?: boolean;
}

export interface GetMetricDataInput {
  MetricDataQueries: MetricStatQuery[];
  /** Epoch seconds. */
  StartTime: number;
  /** Epoch seconds. */
  EndTime: number;
  ScanBy?: 'TimestampAscending' | 'TimestampDescending';
  NextToken?: string;
}

export interface GetMetricDataOutput {
  MetricDataResults?: { Id?: string; Timestamps?: number[]; Values?: number[]; StatusCode?: string }[];
  NextToken?: string;
}

export const GetMetricDataCommand = jsonCommand<GetMetricDataInput, GetMetricDataOutput>('GetMetricData');
