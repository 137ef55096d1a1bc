/**
 * A record's trace as a waterfall: a table, one row per span (indented by its depth), its start and duration in
 * text, its status in words ("Error", with the HTTP status), and a bar placed by start and duration against the
 * trace's length. The bar only repeats the text beside it (hidden from screen readers); an SVG's attributes place
 * it, since the CSP allows no inline style.
 */
import { ApiError } from '../auth.ts';
import type { TraceSpan, TraceView } from '../types.ts';
import { Loading, Problem, useApi } from '../ui.tsx';

/** Milliseconds as read: "41.2 ms", "2.35 s", "40 min 3 s". */
export const duration = (ms: number): string => {
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
};

const statusText = (span: TraceSpan): string =>
  `${span.status === 'error' ? 'Error' : 'OK'}${span.statusCode === undefined ? '' : ` (HTTP ${span.statusCode})`}`;

/** The deepest indentation drawn (deeper spans are drawn at it; their level is still said). */
const DEEPEST = 8;

const Bar = ({ span, total }: { span: TraceSpan; total: number }) => {
  const x = total > 0 ? (span.startMs / total) * 100 : 0;
  // A span too short to see still shows as a sliver.
  const width = Math.max(total > 0 ? (span.durationMs / total) * 100 : 100, 0.4);
  return (
    <svg
      class="trace-bar"
      viewBox="0 0 100 6"
      preserveAspectRatio="none"
      aria-hidden="true"
      focusable="false"
    >
      <rect
        x={Math.min(x, 99.6)}
        y="0"
        width={Math.min(width, 100 - Math.min(x, 99.6))}
        height="6"
        class={`bar-${span.status}`}
      />
    </svg>
  );
};

export const Waterfall = ({ trace }: { trace: TraceView }) => {
  const total = Math.max(0, ...trace.spans.map((span) => span.startMs + span.durationMs));
  return (
    <table aria-labelledby="trace-heading" class="waterfall">
      <thead>
        <tr>
          <th scope="col">Span</th>
          <th scope="col">Start</th>
          <th scope="col">Duration</th>
          <th scope="col">Status</th>
          <th scope="col" class="trace-bars">
            Timing (0 to {duration(total)})
          </th>
        </tr>
      </thead>
      <tbody>
        {trace.spans.map((span) => (
          <tr key={span.spanId} class={span.status === 'error' ? 'span-error' : undefined}>
            <th scope="row" class={`span-name depth-${Math.min(span.depth, DEEPEST)}`}>
              <span class="visually-hidden">Level {span.depth + 1}: </span>
              {span.name}
              {span.linked && <span class="note"> (batched call, linked)</span>}
            </th>
            <td class="number">+{duration(span.startMs)}</td>
            <td class="number">{duration(span.durationMs)}</td>
            <td>{statusText(span)}</td>
            <td class="trace-bars">
              <Bar span={span} total={total} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
};

/** The record page's "Trace" section: its waterfall, or why there is none (a note, not an alarm). */
export const TraceSection = ({ id }: { id: string }) => {
  const { data, error } = useApi<TraceView>(`records/${encodeURIComponent(id)}/trace`);
  return (
    <section aria-labelledby="trace-heading">
      <h2 id="trace-heading">Trace</h2>
      {error instanceof ApiError && error.status === 404 ? (
        <p class="note">{error.message}</p>
      ) : (
        error && <Problem error={error} />
      )}
      {!data && !error && <Loading />}
      {data && (
        <>
          <p class="note">
            Trace id <code>{data.traceId}</code>: {data.spans.length} spans
          </p>
          {data.spans.length > 0 && <Waterfall trace={data} />}
        </>
      )}
    </section>
  );
};
