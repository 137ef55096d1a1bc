/** What every page shares: loading an API answer, times, names, and how a failure is shown. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './auth.ts';
import type { Downstream, Kind } from './types.ts';

export interface Loaded<T> {
  data?: T;
  error?: ApiError | Error;
  loading: boolean;
  reload: () => void;
}

/** GETs an API path whenever it changes (`undefined`: nothing yet). */
export const useApi = <T,>(path: string | undefined): Loaded<T> => {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (path === undefined) return;
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    api<T>(path).then(
      (data) => current && setState({ data, loading: false }),
      (error: Error) => current && setState({ error, loading: false }),
    );
    return () => {
      current = false;
    };
  }, [path, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
};

/** A time as the support desk reads it: local date and time to the second. */
export const when = (iso: string | undefined): string =>
  iso ? new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' }) : '—';

/** A `<time>` element for an ISO time. */
export const Time = ({ at }: { at?: string }) => (at ? <time dateTime={at}>{when(at)}</time> : <>—</>);

/** How long ago, roughly: "3 h 12 min". */
export const age = (iso: string, now = Date.now()): string => {
  const minutes = Math.max(0, Math.round((now - Date.parse(iso)) / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
};

export const kindName = (kind: Kind): string =>
  kind === 'salesRegistration' ? 'Sales registration' : 'Case';
export const downstreamName = (d: Downstream): string => (d === 'erp' ? 'SAP' : 'Salesforce');

/** An API failure, said plainly (a 404 of a route not there yet says so too). */
export const Problem = ({ error }: { error: Error }) => (
  <p role="alert" class="problem">
    {error instanceof ApiError && error.status === 403
      ? 'Your role may not do this.'
      : error instanceof ApiError && error.status === 404
        ? `Not found: ${error.message}`
        : `Something went wrong: ${error.message}`}
  </p>
);

/** A page: its heading (the document's title too) and content. */
export const PageFrame = ({
  title,
  children,
  heading,
}: {
  title: string;
  heading?: ComponentChildren;
  children: ComponentChildren;
}) => {
  useEffect(() => {
    document.title = `${title} - dealer-gateway console`;
  }, [title]);
  return (
    <>
      {heading ?? <h1>{title}</h1>}
      {children}
    </>
  );
};

/** What a loading answer shows meanwhile. */
export const Loading = () => (
  <p class="loading" aria-live="polite">
    Loading…
  </p>
);

/** A state as a badge, its word written out (colour is never the only sign). */
export const StateBadge = ({ state }: { state: string }) => (
  <span class={`state state-${state}`}>{state}</span>
);

export const TestBadge = () => <span class="badge-test">Test</span>;
