import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The service's structured JSON logger. Log ids, counts, statuses and error names only: never names,
 * e-mail addresses, phone numbers, dates of birth or addresses (nor whole records or request bodies).
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'dealer-gateway' });

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
