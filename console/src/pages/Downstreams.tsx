/** Downstreams: SAP and Salesforce, open or held, their probes, what waits for them, Salesforce's allowance. */
import type { DownstreamView } from '../types.ts';
import { Loading, PageFrame, Problem, Time, useApi } from '../ui.tsx';

export const DownstreamsPage = () => {
  const { data, error } = useApi<{ downstreams: DownstreamView[] }>('downstreams');
  return (
    <PageFrame title="Downstreams">
      {error && <Problem error={error} />}
      {!data && !error && <Loading />}
      <div class="cards">
        {data?.downstreams.map((d) => (
          <section key={d.downstream} class="card" aria-labelledby={`downstream-${d.downstream}`}>
            <h2 id={`downstream-${d.downstream}`}>{d.name}</h2>
            <p class={d.held ? 'held' : 'open'}>
              <strong>
                {d.held ? (
                  <>
                    Held since <Time at={d.heldSince} />
                  </>
                ) : (
                  'Open'
                )}
              </strong>
            </p>
            <dl>
              <div>
                <dt>Reason</dt>
                <dd>{d.reason ?? '—'}</dd>
              </div>
              <div>
                <dt>Last probe</dt>
                <dd>
                  <Time at={d.lastProbeAt} />
                </dd>
              </div>
              <div>
                <dt>Next probe</dt>
                <dd>
                  <Time at={d.nextProbeAt} />
                </dd>
              </div>
              <div>
                <dt>Records waiting</dt>
                <dd>{d.waiting}</dd>
              </div>
              {(d.apiUsage || d.downstream === 'crm') && (
                <div>
                  <dt>API allowance used</dt>
                  <dd>
                    {d.apiUsage ? (
                      <>
                        {`${d.apiUsage.used.toLocaleString('en-GB')} / ${d.apiUsage.allowed.toLocaleString('en-GB')}`}{' '}
                        (read <Time at={d.apiUsage.at} />)
                      </>
                    ) : (
                      'not reported yet'
                    )}
                  </dd>
                </div>
              )}
            </dl>
          </section>
        ))}
      </div>
    </PageFrame>
  );
};
