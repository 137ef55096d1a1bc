/**
 * Failed: the `failed` records; operators choose some and redrive them, after a confirmation that says how many
 * will move (nothing moves before it).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../auth.ts';
import { RecordsTable } from '../components/RecordsTable.tsx';
import type { Page, RedriveResult, Row } from '../types.ts';
import { Loading, PageFrame, Problem } from '../ui.tsx';

const plural = (n: number): string => `${n} record${n === 1 ? '' : 's'}`;

export const FailedPage = ({ operator }: { operator: boolean }) => {
  const [rows, setRows] = useState<Row[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [outcome, setOutcome] = useState<string | undefined>();
  const dialog = useRef<HTMLDialogElement>(null);

  const load = async (cursor?: string) => {
    try {
      const page = await api<Page<Row>>(`failed${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
      setRows((earlier) => [...(cursor ? (earlier ?? []) : []), ...(page.records ?? [])]);
      setNext(page.next);
    } catch (e) {
      setError(e as Error);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const toggle = (id: string) => {
    const set = new Set(chosen);
    if (set.has(id)) set.delete(id);
    else set.add(id);
    setChosen(set);
  };
  const all = rows !== undefined && rows.length > 0 && rows.every((r) => chosen.has(r.id));
  const toggleAll = () => setChosen(all ? new Set() : new Set(rows?.map((r) => r.id)));

  const redrive = async () => {
    dialog.current?.close();
    const ids = [...chosen];
    setError(undefined);
    try {
      const result = await api<RedriveResult>('records/redrive', { method: 'POST', body: { ids } });
      const skipped = result.skipped ?? [];
      setOutcome(
        `${plural(result.redriven.length)} redriven: accepted again and queued for delivery.${
          skipped.length
            ? ` ${plural(skipped.length)} skipped: ${skipped.map((s) => `${s.id} (${s.reason})`).join(', ')}.`
            : ''
        }`,
      );
      setChosen(new Set());
      await load();
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <PageFrame title="Failed">
      <p>
        Records whose delivery failed after every attempt. Redriving one accepts it again and delivers it.
      </p>
      {outcome && <p role="status">{outcome}</p>}
      {error && <Problem error={error} />}
      {!rows && !error && <Loading />}
      {rows && rows.length === 0 && <p role="status">No failed record.</p>}
      {rows && rows.length > 0 && (
        <>
          {operator && (
            <p class="actions">
              <button type="button" disabled={chosen.size === 0} onClick={() => dialog.current?.showModal()}>
                Redrive selected
              </button>{' '}
              <span aria-live="polite">{chosen.size} selected</span>
            </p>
          )}
          <RecordsTable
            rows={rows}
            label="Failed records, newest first"
            select={operator ? { chosen, all, toggle, toggleAll } : undefined}
          />
          {next && (
            <button type="button" onClick={() => load(next)}>
              More records
            </button>
          )}
        </>
      )}
      <dialog ref={dialog} aria-labelledby="confirm-title" aria-describedby="confirm-text">
        <h2 id="confirm-title">Redrive records?</h2>
        <p id="confirm-text">
          {plural(chosen.size)} will be redriven: each is accepted again and delivered to SAP or Salesforce.
        </p>
        <p class="actions">
          <button type="button" onClick={redrive}>
            Redrive {plural(chosen.size)}
          </button>{' '}
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </p>
      </dialog>
    </PageFrame>
  );
};
