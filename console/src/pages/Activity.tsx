/**
 * Activity: records accepted, delivered and failed per hour over the last 24 hours, per downstream, as a chart
 * drawn here (an inline SVG with a title and description) and the same figures as a table; and the open records
 * with the age of the oldest.
 */
import type { Activity, ActivityHour, Downstream } from '../types.ts';
import { age, downstreamName, Loading, PageFrame, Problem, Time, useApi } from '../ui.tsx';

const SERIES = ['accepted', 'delivered', 'failed'] as const;
const WIDTH = 720;
const HEIGHT = 220;
const PAD = { left: 44, right: 12, top: 12, bottom: 28 };

const hourLabel = (iso: string): string =>
  new Date(iso).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' });

/** One downstream's 24 hours as lines, one per series; the axes' figures as text. */
const Chart = ({ downstream, hours }: { downstream: Downstream; hours: ActivityHour[] }) => {
  const name = downstreamName(downstream);
  const top = Math.max(1, ...hours.flatMap((h) => SERIES.map((s) => h[s])));
  const x = (i: number) => PAD.left + (i * (WIDTH - PAD.left - PAD.right)) / Math.max(1, hours.length - 1);
  const y = (v: number) => PAD.top + (1 - v / top) * (HEIGHT - PAD.top - PAD.bottom);
  const totals = Object.fromEntries(SERIES.map((s) => [s, hours.reduce((sum, h) => sum + h[s], 0)]));
  const id = `chart-${downstream}`;
  return (
    <section class="chart" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{name}</h2>
      <figure>
        <figcaption>
          <ul class="legend">
            {SERIES.map((s) => (
              <li key={s}>
                <span class={`swatch swatch-${s}`} aria-hidden="true" /> {s}: {totals[s]}
              </li>
            ))}
          </ul>
        </figcaption>
        <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title ${id}-desc`}>
          <title id={`${id}-title`}>{`${name}: records per hour over the last 24 hours`}</title>
          <desc id={`${id}-desc`}>
            {`In all: ${totals.accepted} accepted, ${totals.delivered} delivered, ${totals.failed} failed; the highest hour ${top}. The table below gives every hour.`}
          </desc>
          <line class="axis" x1={PAD.left} y1={y(0)} x2={WIDTH - PAD.right} y2={y(0)} />
          <line class="axis" x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={y(0)} />
          <text class="tick" x={PAD.left - 6} y={y(top) + 4} text-anchor="end">
            {top}
          </text>
          <text class="tick" x={PAD.left - 6} y={y(0) + 4} text-anchor="end">
            0
          </text>
          {hours.map((h, i) =>
            i % 4 === 0 ? (
              <text key={h.hour} class="tick" x={x(i)} y={HEIGHT - 8} text-anchor="middle">
                {hourLabel(h.hour)}
              </text>
            ) : null,
          )}
          {SERIES.map((s) => (
            <polyline
              key={s}
              class={`line line-${s}`}
              fill="none"
              points={hours.map((h, i) => `${x(i).toFixed(1)},${y(h[s]).toFixed(1)}`).join(' ')}
            />
          ))}
        </svg>
        <details>
          <summary>{`${name} per hour, as a table`}</summary>
          <table>
            <caption>{`${name}: records per hour`}</caption>
            <thead>
              <tr>
                <th scope="col">Hour</th>
                <th scope="col">Accepted</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {hours.map((h) => (
                <tr key={h.hour}>
                  <th scope="row">
                    <Time at={h.hour} />
                  </th>
                  <td>{h.accepted}</td>
                  <td>{h.delivered}</td>
                  <td>{h.failed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      </figure>
    </section>
  );
};

export const ActivityPage = () => {
  const { data, error } = useApi<Activity>('activity');
  const per = (d: Downstream) =>
    (data?.hours ?? []).filter((h) => h.downstream === d).sort((a, b) => a.hour.localeCompare(b.hour));
  return (
    <PageFrame title="Activity">
      {error && <Problem error={error} />}
      {!data && !error && <Loading />}
      {data && (
        <>
          <p class="open-records">
            <strong>{data.open.count}</strong> open record{data.open.count === 1 ? '' : 's'}
            {data.open.oldestAcceptedAt && (
              <>
                ; the oldest accepted {age(data.open.oldestAcceptedAt)} ago (
                <Time at={data.open.oldestAcceptedAt} />)
              </>
            )}
          </p>
          <Chart downstream="erp" hours={per('erp')} />
          <Chart downstream="crm" hours={per('crm')} />
        </>
      )}
    </PageFrame>
  );
};
