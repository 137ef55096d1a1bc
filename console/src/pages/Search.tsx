/** Search: by frame number, record id, SAP document number or Salesforce id, with filters; newest first. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../auth.ts';
import { RecordsTable } from '../components/RecordsTable.tsx';
import type { Page, Row } from '../types.ts';
import { Loading, PageFrame, Problem } from '../ui.tsx';

/** The filters a search takes, as they stand in the page's address (`#/search?q=…`): never personal data. */
const FIELDS = ['q', 'kind', 'state', 'client', 'mode', 'from', 'to'] as const;
type Filters = Partial<Record<(typeof FIELDS)[number], string>>;

/** A date field's day as the API's instant: the start of `from`'s day, the end of `to`'s, in local time. */
const instantOf = (field: 'from' | 'to', day: string): string =>
  new Date(`${day}T${field === 'from' ? '00:00:00.000' : '23:59:59.999'}`).toISOString();

const queryOf = (filters: Filters, cursor?: string): string => {
  const query = new URLSearchParams();
  for (const field of FIELDS) {
    const value = filters[field]?.trim();
    if (!value) continue;
    query.set(field, field === 'from' || field === 'to' ? instantOf(field, value) : value);
  }
  if (cursor) query.set('cursor', cursor);
  return query.toString();
};

/** The search box and filters: a draft until submitted, then the page's address (so Back works). */
const SearchForm = ({ filters }: { filters: Filters }) => {
  const [draft, setDraft] = useState<Filters>(filters);
  const bind = (field: (typeof FIELDS)[number]) => ({
    name: field,
    value: draft[field] ?? '',
    onInput: (event: Event) =>
      setDraft({ ...draft, [field]: (event.currentTarget as HTMLInputElement).value }),
  });
  const submit = (event: Event) => {
    event.preventDefault();
    const chosen = new URLSearchParams();
    for (const field of FIELDS) {
      const value = draft[field]?.trim();
      if (value) chosen.set(field, value);
    }
    location.hash = `#/search?${chosen}`;
  };
  return (
    <search>
      <form class="search" onSubmit={submit}>
        <p class="search-box">
          <label for="q">Search records</label>
          <input
            id="q"
            type="search"
            {...bind('q')}
            placeholder="Frame number, record id, SAP document or Salesforce id"
            autocomplete="off"
          />
          <button type="submit">Search</button>
        </p>
        <fieldset class="filters">
          <legend>Filters</legend>
          <label>
            Kind
            <select {...bind('kind')}>
              <option value="">Any</option>
              <option value="salesRegistration">Sales registration</option>
              <option value="crmCase">Case</option>
            </select>
          </label>
          <label>
            State
            <select {...bind('state')}>
              <option value="">Any</option>
              <option value="accepted">accepted</option>
              <option value="delivered">delivered</option>
              <option value="rejected">rejected</option>
              <option value="failed">failed</option>
            </select>
          </label>
          <label>
            Client
            <input {...bind('client')} autocomplete="off" />
          </label>
          <label>
            Live or test
            <select {...bind('mode')}>
              <option value="">Both</option>
              <option value="live">Live</option>
              <option value="test">Test</option>
            </select>
          </label>
          <label>
            Accepted from
            <input type="date" {...bind('from')} />
          </label>
          <label>
            Accepted to
            <input type="date" {...bind('to')} />
          </label>
        </fieldset>
      </form>
    </search>
  );
};

export const SearchPage = ({ params }: { params: URLSearchParams }) => {
  const filters: Filters = Object.fromEntries(FIELDS.map((f) => [f, params.get(f) ?? '']));
  const query = queryOf(filters);
  const [rows, setRows] = useState<Row[] | undefined>();
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<Error | undefined>();

  useEffect(() => {
    let current = true;
    setRows(undefined);
    setError(undefined);
    api<Page<Row>>(`records?${query}`).then(
      (page) => {
        if (!current) return;
        setRows(page.records ?? []);
        setNext(page.next);
      },
      (e: Error) => current && setError(e),
    );
    return () => {
      current = false;
    };
  }, [query]);

  const more = async () => {
    if (!next) return;
    try {
      const page = await api<Page<Row>>(`records?${queryOf(filters, next)}`);
      setRows([...(rows ?? []), ...(page.records ?? [])]);
      setNext(page.next);
    } catch (e) {
      setError(e as Error);
    }
  };

  return (
    <PageFrame title="Search">
      <SearchForm filters={filters} key={query} />
      {error && <Problem error={error} />}
      {!rows && !error && <Loading />}
      {rows && rows.length === 0 && <p role="status">No record matches.</p>}
      {rows && rows.length > 0 && (
        <>
          <RecordsTable rows={rows} label={`Records, newest first (${rows.length}${next ? '+' : ''})`} />
          {next && (
            <button type="button" onClick={more}>
              More records
            </button>
          )}
        </>
      )}
    </PageFrame>
  );
};
