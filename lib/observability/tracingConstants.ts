/** The W3C Trace Context header, as HTTP requests, SQS message attributes and event details carry it. */
export const TRACEPARENT = 'traceparent';
