import { LogFormatter, Logger, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { activeTraceIds } from './tracing.ts';

/**
 * Powertools' own log format, plus the `traceId` and `spanId` of the span active when the line is written
 * (contract section 8: every log line about a record names its trace). The one place that adds them: every logger
 * of the service is this one (or a child, which keeps its formatter).
 */
export class TracedLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const context = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel,
        message: attributes.message,
        timestamp: this.formatTimestamp(attributes.timestamp),
        service: attributes.serviceName,
        cold_start: context?.coldStart,
        function_arn: context?.invokedFunctionArn,
        function_memory_size: context?.memoryLimitInMB,
        function_name: context?.functionName,
        function_request_id: context?.awsRequestId,
        sampling_rate: attributes.sampleRateValue,
        xray_trace_id: attributes.xRayTraceId,
        ...activeTraceIds(),
      },
    }).addAttributes(additional);
  }
}

/**
 * The service's structured JSON logger. Log ids, counts, statuses and error names only: never names,
 * e-mail addresses, phone numbers, dates of birth or addresses (nor whole records or request bodies).
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'dealer-gateway',
  logFormatter: new TracedLogFormatter(),
});

/** What may be logged of an error: its name, status and where it was thrown, not its message (it may echo input). */
export const errorSummary = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { errorName: typeof error };
  const status = (error as { $metadata?: { httpStatusCode?: number }; statusCode?: number }).$metadata
    ?.httpStatusCode;
  return {
    errorName: error.name,
    ...(status ? { errorStatus: status } : {}),
    errorAt: error.stack
      ?.split('\n')
      .slice(1, 4)
      .map((line) => line.trim()),
  };
};
