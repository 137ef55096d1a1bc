import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { credentialsFromEnv } from '../aws/jsonProtocol/client.ts';
import { httpPost } from '../aws/jsonProtocol/httpPost.ts';
import { type AwsCredentials, signRequest } from '../aws/jsonProtocol/signatureV4.ts';

/*
 * Spans to CloudWatch's X-Ray OTLP endpoint (`https://xray.<region>.amazonaws.com/v1/traces`), which takes OTLP/HTTP
 * in JSON or protobuf but only signed with Signature V4 (service `xray`, IAM action `xray:PutSpans`, and
 * `xray:PutSpansForIndexing` for the spans it indexes). The OpenTelemetry OTLP exporter cannot sign (its headers
 * never see the body that the signature covers), so this one serialises with the SDK's own OTLP JSON serializer
 * and signs with the signer the AWS clients use (lib/aws/jsonProtocol/signatureV4.ts). Loaded as a chunk of its own
 * by lib/observability/tracing.ts only when TRACES_EXPORT=xray.
 */

export interface XRaySpanExporterOptions {
  /** The OTLP traces URL (lib/settings/settings.ts tracesExport). */
  url: string;
  /** The region the requests are signed for. */
  region: string;
  /** The function role's credentials by default (Lambda puts them in the environment). */
  credentials?: () => AwsCredentials;
  /** Deadline of one export, from the request's start to the whole answer (default 3 s). */
  timeoutMs?: number;
}

/**
 * A span exporter that posts OTLP JSON to X-Ray's OTLP endpoint, signed. One request per batch, no retry: the
 * handler awaits the export before it returns (lib/observability/traceFlush.ts), and a lost batch costs spans, not
 * records.
 *
 * @example
 * new BatchSpanProcessor({ exporter: new XRaySpanExporter({ url: 'https://xray.eu-west-1.amazonaws.com/v1/traces', region: 'eu-west-1' }) });
 */
export class XRaySpanExporter implements SpanExporter {
  private readonly url: URL;
  private readonly options: XRaySpanExporterOptions;
  private readonly pending = new Set<Promise<void>>();

  constructor(options: XRaySpanExporterOptions) {
    this.options = options;
    this.url = new URL(options.url);
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const sending = this.send(spans).then(
      () => done({ code: ExportResultCode.SUCCESS }),
      (error: unknown) =>
        done({
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    this.pending.add(sending);
    void sending.finally(() => this.pending.delete(sending));
  }

  private async send(spans: ReadableSpan[]): Promise<void> {
    const serialized = JsonTraceSerializer.serializeRequest(spans);
    if (!serialized) throw new Error('the spans could not be serialised as OTLP JSON');
    const body = new TextDecoder().decode(serialized);
    const headers = await signRequest({
      method: 'POST',
      host: this.url.host,
      path: this.url.pathname,
      headers: { 'content-type': 'application/json' },
      body,
      service: 'xray',
      region: this.options.region,
      credentials: (this.options.credentials ?? credentialsFromEnv)(),
    });
    const answer = await httpPost(this.url, headers, body, this.options.timeoutMs ?? 3_000);
    if (answer.status < 200 || answer.status >= 300) {
      // The status only: an error answer may quote the request, and the spans name records.
      throw new Error(`X-Ray's OTLP endpoint answered HTTP ${answer.status}`);
    }
  }

  async forceFlush(): Promise<void> {
    await Promise.all(this.pending);
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
  }
}
