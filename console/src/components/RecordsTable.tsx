/** The records table: one row per record, each a link to its page; with `select`, a checkbox per row and one for all. */
import type { Row } from '../types.ts';
import { kindName, StateBadge, TestBadge, Time } from '../ui.tsx';

/** The rows an operator has chosen, and how to change the choice. */
export interface Selection {
  chosen: Set<string>;
  all: boolean;
  toggle: (id: string) => void;
  toggleAll: () => void;
}

export const RecordsTable = ({ rows, label, select }: { rows: Row[]; label: string; select?: Selection }) => (
  <table>
    <caption>{label}</caption>
    <thead>
      <tr>
        {select && (
          <th scope="col">
            <input type="checkbox" aria-label="Select all" checked={select.all} onChange={select.toggleAll} />
          </th>
        )}
        <th scope="col">Record</th>
        <th scope="col">Kind</th>
        <th scope="col">Client</th>
        <th scope="col">Frame number</th>
        <th scope="col">State</th>
        <th scope="col">Attempts</th>
        <th scope="col">Accepted</th>
        <th scope="col">Updated</th>
      </tr>
    </thead>
    <tbody>
      {rows.map((row) => (
        <tr key={row.id}>
          {select && (
            <td>
              <input
                type="checkbox"
                aria-label={`Select ${row.id}`}
                checked={select.chosen.has(row.id)}
                onChange={() => select.toggle(row.id)}
              />
            </td>
          )}
          <td>
            <a href={`#/records/${row.id}`} class="record-id">
              {row.id}
            </a>{' '}
            {row.test && <TestBadge />}
          </td>
          <td>{kindName(row.kind)}</td>
          <td>{row.client}</td>
          <td>{row.frameNumber ?? '—'}</td>
          <td>
            <StateBadge state={row.state} />
          </td>
          <td>{row.attempts}</td>
          <td>
            <Time at={row.acceptedAt} />
          </td>
          <td>
            <Time at={row.updatedAt} />
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);
