/*
 * W3C Trace Context as text, without the OpenTelemetry SDK: for modules that only read a record's trace (the status
 * look-up) and carry it (queues, events), so that their bundles do not load the SDK.
 */

/** The W3C Trace Context header, as HTTP requests, SQS message attributes and event details carry it. */
export const TRACEPARENT = 'traceparent';

const TRACEPARENT_FORM = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The trace id of a `traceparent` (32 hex digits), or undefined when it is not a valid one (version ff, an
 * all-zero id, another form).
 *
 * @example
 * traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01') // '4bf92f3577b34da6a3ce929d0e0e4736'
 */
export const traceIdOf = (traceparent: string | undefined): string | undefined => {
  const parts = traceparent?.trim().match(TRACEPARENT_FORM);
  if (!parts) return undefined;
  const [, version, traceId, spanId, , rest] = parts;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return traceId;
};
