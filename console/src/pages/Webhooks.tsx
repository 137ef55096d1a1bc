/** Webhooks: per client, its host, enabled or not, its last success and failure, failures in 24 h; "Enable". */
import { useState } from 'preact/hooks';
import { api } from '../auth.ts';
import type { WebhookView } from '../types.ts';
import { Loading, PageFrame, Problem, Time, useApi } from '../ui.tsx';

export const WebhooksPage = ({ operator }: { operator: boolean }) => {
  const { data, error, reload } = useApi<{ webhooks: WebhookView[] }>('webhooks');
  const [said, setSaid] = useState<string | undefined>();
  const [failed, setFailed] = useState<Error | undefined>();
  const enable = async (client: string) => {
    setFailed(undefined);
    try {
      await api(`webhooks/${encodeURIComponent(client)}/enable`, { method: 'POST' });
      setSaid(`The webhook of ${client} is enabled.`);
      reload();
    } catch (e) {
      setFailed(e as Error);
    }
  };
  return (
    <PageFrame title="Webhooks">
      {error && <Problem error={error} />}
      {failed && <Problem error={failed} />}
      {said && <p role="status">{said}</p>}
      {!data && !error && <Loading />}
      {data && (
        <table>
          <caption>Webhooks per client</caption>
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Host</th>
              <th scope="col">State</th>
              <th scope="col">Last success</th>
              <th scope="col">Last failure</th>
              <th scope="col">Failures in 24 h</th>
              {operator && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {data.webhooks.map((w) => (
              <tr key={w.client}>
                <th scope="row">{w.client}</th>
                <td>{w.host}</td>
                <td>{w.enabled ? 'enabled' : 'disabled'}</td>
                <td>
                  <Time at={w.lastSuccessAt} />
                </td>
                <td>
                  <Time at={w.lastFailureAt} />
                </td>
                <td>{w.failuresLast24h}</td>
                {operator && (
                  <td>
                    {!w.enabled && (
                      <button type="button" onClick={() => enable(w.client)}>
                        Enable
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </PageFrame>
  );
};
