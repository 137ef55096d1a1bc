/** A row of the console's trace waterfall: a leaf module the front end imports types from. */

/** One row of a record's waterfall, as the console draws it. */
export interface TraceRow {
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** After the trace's first span. */
  startMs: number;
  durationMs: number;
  status: 'ok' | 'error';
  /** The HTTP status the span's request was answered (its `http.response.status_code`). */
  statusCode?: number;
  /** A span of a batched call's own trace, linked to this record's. */
  linked: boolean;
  /** How deep it is drawn: 0 for a root, its parent's plus one (a linked call's root under the span it links to). */
  depth: number;
}
