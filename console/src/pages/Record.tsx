/** A record's page: its state, its timeline oldest first, its trace as a waterfall, its customer (on request, audited) and its actions. */
import { useState } from 'preact/hooks';
import { api } from '../auth.ts';
import { TraceSection } from '../components/Waterfall.tsx';
import type { Entry, RecordView } from '../types.ts';
import {
  downstreamName,
  kindName,
  Loading,
  PageFrame,
  Problem,
  StateBadge,
  TestBadge,
  Time,
  useApi,
} from '../ui.tsx';

/** An answer's status as said in the timeline: the code, or that none came. */
const statusText = (status: number | null): string => (status === null ? 'no answer' : `HTTP ${status}`);

/** What one timeline entry says. */
const entryText = (entry: Entry): string => {
  switch (entry.type) {
    case 'accepted':
      return `Accepted from ${entry.client}`;
    case 'attempt':
      return `Delivery attempt to ${downstreamName(entry.downstream)}: ${statusText(entry.status)}${
        entry.message ? `, ${entry.message}` : ''
      } (${entry.durationMs} ms)`;
    case 'held':
      return `Waited while ${downstreamName(entry.downstream)} was held (since ${new Date(entry.heldSince).toLocaleString('en-GB')}${
        entry.until ? `, until ${new Date(entry.until).toLocaleString('en-GB')}` : ''
      })`;
    case 'final':
      return `Final state: ${entry.state}`;
    case 'webhook':
      return `Webhook to ${entry.client}: ${statusText(entry.status)}${
        entry.durationMs === undefined ? '' : ` (${entry.durationMs} ms)`
      }, webhook-id ${entry.webhookId}`;
    case 'redrive':
      return `Redriven by ${entry.by}`;
  }
};

/** The "Customer" section: closed at first; opening it fetches the personal fields (the API audits the view). */
const Customer = ({ id }: { id: string }) => {
  const [customer, setCustomer] = useState<Record<string, unknown> | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const toggled = (event: Event) => {
    if (!(event.currentTarget as HTMLDetailsElement).open || customer) return;
    api<{ customer: Record<string, unknown> }>(`records/${id}/customer`).then(
      (answer) => setCustomer(answer.customer),
      (e: Error) => setError(e),
    );
  };
  return (
    <details class="customer" onToggle={toggled}>
      <summary>Customer</summary>
      <p class="note">Opening this section is recorded in the audit.</p>
      {error && <Problem error={error} />}
      {!customer && !error && <Loading />}
      {customer && (
        <dl>
          {Object.entries(customer).map(([field, value]) => (
            <div key={field}>
              <dt>{field}</dt>
              <dd>{typeof value === 'object' ? JSON.stringify(value) : String(value)}</dd>
            </div>
          ))}
        </dl>
      )}
    </details>
  );
};

/** "Resend webhook" (operators): the record's last event again, with the same webhook-id. */
const Resend = ({ id }: { id: string }) => {
  const [said, setSaid] = useState<string | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const resend = async () => {
    setError(undefined);
    try {
      const { webhookId } = await api<{ webhookId: string }>(`records/${id}/webhook/resend`, {
        method: 'POST',
      });
      setSaid(`Webhook ${webhookId} sent again.`);
    } catch (e) {
      setError(e as Error);
    }
  };
  return (
    <p>
      <button type="button" onClick={resend}>
        Resend webhook
      </button>{' '}
      {said && <span role="status">{said}</span>}
      {error && <Problem error={error} />}
    </p>
  );
};

export const RecordPage = ({ id, operator }: { id: string; operator: boolean }) => {
  const { data: record, error } = useApi<RecordView>(`records/${encodeURIComponent(id)}`);
  return (
    <PageFrame
      title={`Record ${id}`}
      heading={
        <div class="record-heading">
          <h1 class="record-id">{id}</h1>
          {record?.test && <TestBadge />}
        </div>
      }
    >
      {error && <Problem error={error} />}
      {!record && !error && <Loading />}
      {record && (
        <>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd>
                <StateBadge state={record.state} />
              </dd>
            </div>
            <div>
              <dt>Kind</dt>
              <dd>{kindName(record.kind)}</dd>
            </div>
            <div>
              <dt>Client</dt>
              <dd>{record.client}</dd>
            </div>
            <div>
              <dt>Frame number</dt>
              <dd>{record.frameNumber ?? '—'}</dd>
            </div>
            <div>
              <dt>Attempts</dt>
              <dd>{record.attempts}</dd>
            </div>
            <div>
              <dt>Downstream</dt>
              <dd>
                {record.downstream ? downstreamName(record.downstream) : '—'}
                {record.downstreamId ? ` (${record.downstreamId})` : ''}
              </dd>
            </div>
            <div>
              <dt>Accepted</dt>
              <dd>
                <Time at={record.acceptedAt} />
              </dd>
            </div>
            <div>
              <dt>Updated</dt>
              <dd>
                <Time at={record.updatedAt} />
              </dd>
            </div>
            {record.error && (
              <div>
                <dt>Error</dt>
                <dd>{record.error}</dd>
              </div>
            )}
          </dl>
          {operator && record.lastWebhookId && <Resend id={record.id} />}
          <h2 id="timeline-heading">Timeline</h2>
          <ol aria-label="Timeline" class="timeline">
            {(record.timeline ?? []).map((entry, i) => (
              <li key={`${entry.at}-${i}`} class={`entry entry-${entry.type}`}>
                <Time at={entry.at} /> <span>{entryText(entry)}</span>
              </li>
            ))}
          </ol>
          <TraceSection id={record.id} />
          {record.hasCustomer ? (
            <Customer id={record.id} />
          ) : (
            <p>
              <strong>Customer:</strong> the personal data has been removed (purged).
            </p>
          )}
        </>
      )}
    </PageFrame>
  );
};
