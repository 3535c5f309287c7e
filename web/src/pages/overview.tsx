/** Overview: health, readiness, setup steps, ledger head and checkpoint, drift and attack-path counts. */
import { useEffect } from 'preact/hooks';
import { api } from '../api';
import { useApp } from '../app-context';
import type { PageProps } from '../pages';
import { Show, useAsync } from '../ui';

interface Summary {
  nodes: { agents: number; sessions: number; identities: number; resources: number };
  edges: { total: number; permitted: number; observed: number };
  drift: { unexpected: number; unused: number };
  attack_surface: { credential_accesses: number; control_writes: number };
  escalation: { agents_with_paths: number; agents_evaluated: number; top: Array<{ agent: { id: string; name: string }; targets: number; shortest: number }> };
}
interface Verify {
  ok: boolean;
  chain: { checked: number };
  checkpoints: { status: string; count: number; latest_attested_seq: number | null };
}

const optional = <T,>(p: Promise<T>): Promise<T | null> => p.catch(() => null);

export function OverviewPage(_: PageProps) {
  const app = useApp();
  const [data, reload] = useAsync(async () => {
    const [health, ready, status, head, verify, summary, agents, keys, creds] = await Promise.all([
      api<{ status: string }>('GET', '/healthz', undefined, { noTenant: true }),
      api<{ status: string }>('GET', '/readyz', undefined, { noTenant: true }).catch((e: Error) => ({ status: `not ready (${e.message})` })),
      api<{ uptime_seconds: number; version: string }>('GET', '/status', undefined, { noTenant: true }),
      app.can('audit:read') ? optional(api<{ head_seq: number }>('GET', '/v1/audit?limit=1')) : null,
      app.can('audit:read') ? optional(api<Verify>('GET', '/v1/audit/verify')) : null,
      app.can('accessmap:graph:read') ? optional(api<Summary>('GET', '/v1/m/accessmap/attack-paths/summary')) : null,
      app.can('agent:read') ? optional(api<{ items: unknown[] }>('GET', '/v1/agents?limit=1')) : null,
      app.can('token:read') ? optional(api<{ items: unknown[] }>('GET', '/v1/tokens?limit=1')) : null,
      optional(api<{ items: unknown[] }>('GET', '/v1/m/identity/webauthn/credentials', undefined, { noTenant: true })),
    ]);
    return { health, ready, status, head, verify, summary, agents, keys, creds };
  }, []);
  useEffect(() => {
    // The browser test reads this mark: time to interactive of the overview.
    if (data.state === 'ok') performance.mark('svc:overview-ready');
  }, [data.state]);
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <Show value={data} what="the overview" retry={reload}>
        {(d) => (
          <div class="cards" data-ready="true">
            <article class="card">
              <h2>Service</h2>
              <dl>
                <dt>Health</dt>
                <dd class={d.health.status === 'ok' ? 'good' : 'bad'}>{d.health.status}</dd>
                <dt>Readiness</dt>
                <dd class={d.ready.status === 'ready' ? 'good' : 'bad'}>{d.ready.status}</dd>
                <dt>Version</dt>
                <dd>{d.status.version}</dd>
                <dt>Uptime</dt>
                <dd>{Math.round(d.status.uptime_seconds / 60)} min</dd>
              </dl>
            </article>
            <article class="card">
              <h2>Setup steps</h2>
              <ol class="steps">
                <li class="done">Organization and superadmin created</li>
                <li class={d.agents && d.agents.items.length > 0 ? 'done' : ''}>
                  <a href="/agents">Register an agent</a>
                </li>
                <li class={d.creds && d.creds.items.length > 0 ? 'done' : ''}>
                  <a href="/admin/security-keys">Register a security key</a> (step-up to AAL3)
                </li>
                <li class={d.keys && d.keys.items.length > 0 ? 'done' : ''}>
                  <a href="/admin/api-keys">Issue an API key</a> for a collector or CI
                </li>
              </ol>
            </article>
            {d.head && (
              <article class="card">
                <h2>Audit ledger</h2>
                <dl>
                  <dt>Head</dt>
                  <dd>seq {d.head.head_seq}</dd>
                  <dt>Integrity</dt>
                  <dd class={d.verify?.ok ? 'good' : 'bad'}>{d.verify ? (d.verify.ok ? `verified (${d.verify.chain.checked} records)` : 'BROKEN') : '—'}</dd>
                  <dt>Last checkpoint</dt>
                  <dd>{d.verify?.checkpoints.latest_attested_seq != null ? `seq ${d.verify.checkpoints.latest_attested_seq}` : `none yet (${d.verify?.checkpoints.status ?? '—'})`}</dd>
                </dl>
                <a href="/audit">Open the audit log</a>
              </article>
            )}
            {d.summary && (
              <article class="card">
                <h2>Access map</h2>
                <dl>
                  <dt>Nodes</dt>
                  <dd>
                    {d.summary.nodes.agents} agents, {d.summary.nodes.identities} identities, {d.summary.nodes.resources} resources
                  </dd>
                  <dt>Edges</dt>
                  <dd>
                    {d.summary.edges.total} ({d.summary.edges.observed} observed, {d.summary.edges.permitted} permitted)
                  </dd>
                  <dt>Drift</dt>
                  <dd class={d.summary.drift.unexpected > 0 ? 'bad' : 'good'}>
                    <a href="/access-map?show=drift">
                      {d.summary.drift.unexpected} unexpected, {d.summary.drift.unused} unused
                    </a>
                  </dd>
                  <dt>Attack paths</dt>
                  <dd class={d.summary.escalation.agents_with_paths > 0 ? 'bad' : 'good'}>
                    {d.summary.escalation.agents_with_paths} of {d.summary.escalation.agents_evaluated} agents can escalate
                  </dd>
                </dl>
                {d.summary.escalation.top.length > 0 && (
                  <>
                    <h3>Most exposed agents</h3>
                    <ul>
                      {d.summary.escalation.top.slice(0, 5).map((t) => (
                        <li key={t.agent.id}>
                          <a href={`/access-map?node=${t.agent.id}&paths=escalation`}>{t.agent.name}</a>: {t.targets} targets, shortest {t.shortest}
                        </li>
                      ))}
                    </ul>
                  </>
                )}
              </article>
            )}
          </div>
        )}
      </Show>
    </section>
  );
}
