/** Audit (operators): who did what to which records, newest first: redrives, webhooks, customer views. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../auth.ts';
import type { AuditEntry, Page } from '../types.ts';
import { Loading, PageFrame, Problem, Time } from '../ui.tsx';

const ACTIONS: Record<AuditEntry['action'], string> = {
  redrive: 'Redrive',
  'enable-webhook': 'Webhook enabled',
  'resend-webhook': 'Webhook resent',
  'view-customer': 'Customer viewed',
};

export const AuditPage = () => {
  const [entries, setEntries] = useState<AuditEntry[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const load = async (cursor?: string) => {
    try {
      const page = await api<Page<AuditEntry>>(
        `audit${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      setEntries((earlier) => [...(cursor ? (earlier ?? []) : []), ...(page.entries ?? [])]);
      setNext(page.next);
    } catch (e) {
      setError(e as Error);
    }
  };
  useEffect(() => {
    void load();
  }, []);
  return (
    <PageFrame title="Audit">
      {error && <Problem error={error} />}
      {!entries && !error && <Loading />}
      {entries && (
        <table>
          <caption>Audit entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Records</th>
              <th scope="col">Client</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry, i) => (
              <tr key={`${entry.at}-${i}`}>
                <td>
                  <Time at={entry.at} />
                </td>
                <td>{entry.who}</td>
                <td>{ACTIONS[entry.action] ?? entry.action}</td>
                <td>
                  <ul class="ids">
                    {entry.records.map((id) => (
                      <li key={id}>
                        <a href={`#/records/${id}`} class="record-id">
                          {id}
                        </a>
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{entry.client ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          More entries
        </button>
      )}
    </PageFrame>
  );
};
