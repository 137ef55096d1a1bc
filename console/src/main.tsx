/**
 * The operations console: signs in (auth.ts), then shows the page of the address's `#/…` part. Pages: Search,
 * Record, Downstreams, Failed, Webhooks, Activity, Audit (operators). Operators' controls show to operators only
 * (the API refuses them to anyone else anyway).
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './styles.css';
import {
  api,
  completeSignIn,
  consoleBase,
  idleTooLong,
  markActive,
  signedIn,
  signIn,
  signOut,
} from './auth.ts';
import { ActivityPage } from './pages/Activity.tsx';
import { AuditPage } from './pages/Audit.tsx';
import { DownstreamsPage } from './pages/Downstreams.tsx';
import { FailedPage } from './pages/Failed.tsx';
import { RecordPage } from './pages/Record.tsx';
import { SearchPage } from './pages/Search.tsx';
import { WebhooksPage } from './pages/Webhooks.tsx';
import type { Me } from './types.ts';

const PAGES = [
  { path: 'search', name: 'Search' },
  { path: 'downstreams', name: 'Downstreams' },
  { path: 'failed', name: 'Failed' },
  { path: 'webhooks', name: 'Webhooks' },
  { path: 'activity', name: 'Activity' },
  { path: 'audit', name: 'Audit', operators: true },
] as const;

/** The address's page part: `#/records/<id>` → ['records', '<id>'], and its query. */
const routeOf = (hash: string): { parts: string[]; params: URLSearchParams } => {
  const [path, query] = hash.replace(/^#\/?/, '').split('?');
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    params: new URLSearchParams(query),
  };
};

const useHash = (): string => {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => {
      setHash(location.hash);
      window.scrollTo(0, 0);
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return hash;
};

const App = ({ me }: { me: Me }) => {
  const { parts, params } = routeOf(useHash());
  const operator = me.roles.includes('operators');
  const [first = 'search', second] = parts;
  let page = <SearchPage params={params} />;
  if (first === 'records' && second) page = <RecordPage id={second} operator={operator} key={second} />;
  else if (first === 'downstreams') page = <DownstreamsPage />;
  else if (first === 'failed') page = <FailedPage operator={operator} />;
  else if (first === 'webhooks') page = <WebhooksPage operator={operator} />;
  else if (first === 'activity') page = <ActivityPage />;
  else if (first === 'audit' && operator) page = <AuditPage />;
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <p class="brand">dealer-gateway console</p>
        <nav aria-label="Pages">
          <ul>
            {PAGES.filter((p) => !('operators' in p) || operator).map((p) => (
              <li key={p.path}>
                <a href={`#/${p.path}`} aria-current={first === p.path ? 'page' : undefined}>
                  {p.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="who">
          {me.email} ({me.roles.join(', ') || 'no role'}){' '}
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </p>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
};

/** A sign-in that could not complete: said, with a way to try again. */
const SignInFailed = ({ reason }: { reason: string }) => (
  <main>
    <h1>Sign-in failed</h1>
    <p role="alert">{reason}</p>
    <p>
      <button type="button" onClick={() => void signIn({ fresh: true })}>
        Sign in again
      </button>
    </p>
  </main>
);

const start = async (): Promise<void> => {
  const root = document.getElementById('app') as HTMLElement;
  if (location.pathname.endsWith('/callback')) {
    try {
      const returnTo = await completeSignIn();
      history.replaceState(null, '', new URL(returnTo || '#/search', consoleBase()));
    } catch (error) {
      history.replaceState(null, '', consoleBase());
      render(<SignInFailed reason={(error as Error).message} />, root);
      return;
    }
  }
  if (!signedIn()) {
    await signIn();
    return;
  }
  // Activity keeps a session; an hour without it ends the session (checked each half minute and on return).
  for (const event of ['pointerdown', 'keydown']) addEventListener(event, markActive, { passive: true });
  const checkIdle = () => {
    if (signedIn() && idleTooLong()) void signIn({ fresh: true });
  };
  setInterval(checkIdle, 30_000);
  addEventListener('focus', checkIdle);
  try {
    render(<App me={await api<Me>('me')} />, root);
  } catch (error) {
    render(<SignInFailed reason={`The console could not start: ${(error as Error).message}`} />, root);
  }
};

void start();
