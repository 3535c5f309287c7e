/** Agents: list with search and filters in the URL, detail, create, edit (409 shown), delete. */
import { useState } from 'preact/hooks';
import { api, ApiError, listAll } from '../api';
import { useApp } from '../app-context';
import type { PageProps } from '../pages';
import { navigate, setQuery } from '../router';
import { ConfirmDialog, Dialog, ErrorBox, Field, fmtTime, Show, useAction, useAsync } from '../ui';

export interface Agent {
  id: string;
  name: string;
  kind: string;
  external_id: string | null;
  status: string;
  labels: Record<string, string>;
  version: number;
  created_at: string;
  updated_at: string;
}

const labelsText = (l: Record<string, string>): string => Object.entries(l).map(([k, v]) => `${k}=${v}`).join(', ');
function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`label "${part}" is not key=value`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}

export function AgentsPage(props: PageProps) {
  return props.rest[0] ? <AgentDetail id={props.rest[0]} /> : <AgentList {...props} />;
}

function AgentList({ loc }: PageProps) {
  const app = useApp();
  const q = loc.query.get('q') ?? '';
  const status = loc.query.get('status') ?? '';
  const [creating, setCreating] = useState(false);
  const [data, reload] = useAsync(() => listAll<Agent>(`/v1/agents${status ? `?status=${status}` : ''}`), [status]);
  return (
    <section aria-labelledby="agents-title">
      <div class="head">
        <h1 id="agents-title">Agents</h1>
        {app.can('agent:write') && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New agent
          </button>
        )}
      </div>
      <div class="filters" role="search">
        <Field label="Search by name" name="q" value={q} onInput={(v) => setQuery({ q: v })} />
        <Field label="Status" name="status" value={status} onInput={(v) => setQuery({ status: v })} options={['', 'active', 'paused', 'disabled']} />
      </div>
      <Show value={data} what="agents" retry={reload} isEmpty={(d) => d.items.length === 0} empty="No agent yet. Create one, or let a collector report them.">
        {(d) => {
          const rows = d.items.filter((a) => !q || a.name.toLowerCase().includes(q.toLowerCase()) || (a.external_id ?? '').toLowerCase().includes(q.toLowerCase()));
          if (rows.length === 0) return <p class="state empty">No agent matches “{q}”.</p>;
          return (
            <table>
              <caption>{rows.length} agents</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Labels</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((a) => (
                  <tr key={a.id}>
                    <td>
                      <a href={`/agents/${a.id}`}>{a.name}</a>
                    </td>
                    <td>{a.kind}</td>
                    <td>
                      <span class={`badge ${a.status}`}>{a.status}</span>
                    </td>
                    <td>{labelsText(a.labels)}</td>
                    <td>{fmtTime(a.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          );
        }}
      </Show>
      <AgentForm open={creating} onClose={() => setCreating(false)} onSaved={(a) => navigate(`/agents/${a.id}`)} />
    </section>
  );
}

function AgentForm(props: { open: boolean; agent?: Agent; onClose: () => void; onSaved: (a: Agent) => void }) {
  const a = props.agent;
  const [name, setName] = useState(a?.name ?? '');
  const [kind, setKind] = useState(a?.kind ?? 'agent');
  const [status, setStatus] = useState(a?.status ?? 'active');
  const [labels, setLabels] = useState(a ? labelsText(a.labels) : '');
  const action = useAction();
  const conflict = action.error instanceof ApiError && action.error.status === 409;
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const l = parseLabels(labels);
      let saved: Agent;
      if (a) {
        // Labels merge per RFC 7396: a removed key is sent as null.
        const patchLabels: Record<string, string | null> = { ...l };
        for (const k of Object.keys(a.labels)) if (!(k in l)) patchLabels[k] = null;
        saved = await api<Agent>('PATCH', `/v1/agents/${a.id}`, { version: a.version, name, kind, status, labels: patchLabels });
      } else {
        saved = await api<Agent>('POST', '/v1/agents', { name, kind, status, labels: l });
      }
      props.onSaved(saved);
      props.onClose();
    });
  };
  return (
    <Dialog title={a ? `Edit ${a.name}` : 'New agent'} open={props.open} onClose={props.onClose} id="agent-form">
      <form onSubmit={submit}>
        <Field label="Name" name="name" value={name} onInput={setName} required />
        <Field label="Kind" name="kind" value={kind} onInput={setKind} />
        <Field label="Status" name="agent-status" value={status} onInput={setStatus} options={['active', 'paused', 'disabled']} />
        <Field label="Labels" name="labels" value={labels} onInput={setLabels} hint="key=value, comma-separated" />
        {conflict ? (
          <div class="state error" role="alert" id="conflict">
            <strong>Someone else changed this agent</strong> since you opened it (version {a?.version} is no longer current). Your edits were not saved. Close this form to load the current version, then apply your change again.
          </div>
        ) : (
          action.error && <ErrorBox error={action.error} />
        )}
        <div class="actions">
          <button type="submit" class="primary" disabled={action.busy || conflict}>
            Save
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function AgentDetail({ id }: { id: string }) {
  const app = useApp();
  const [data, reload] = useAsync(() => api<Agent>('GET', `/v1/agents/${encodeURIComponent(id)}`), [id]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  return (
    <section aria-labelledby="agent-title">
      <p>
        <a href="/agents">← Agents</a>
      </p>
      <Show value={data} what="the agent" retry={reload}>
        {(a) => (
          <>
            <div class="head">
              <h1 id="agent-title">{a.name}</h1>
              {app.can('agent:write') && (
                <div class="actions">
                  <button type="button" onClick={() => setEditing(true)}>
                    Edit
                  </button>
                  <button type="button" class="danger" onClick={() => setDeleting(true)}>
                    Delete
                  </button>
                </div>
              )}
            </div>
            <dl class="detail">
              <dt>ID</dt>
              <dd>
                <code>{a.id}</code>
              </dd>
              <dt>Kind</dt>
              <dd>{a.kind}</dd>
              <dt>External ID</dt>
              <dd>{a.external_id ?? '—'}</dd>
              <dt>Status</dt>
              <dd>{a.status}</dd>
              <dt>Labels</dt>
              <dd>{labelsText(a.labels) || '—'}</dd>
              <dt>Version</dt>
              <dd>{a.version}</dd>
              <dt>Created</dt>
              <dd>{fmtTime(a.created_at)}</dd>
              <dt>Updated</dt>
              <dd>{fmtTime(a.updated_at)}</dd>
            </dl>
            <p>
              <a href={`/access-map?node=${a.id}&paths=escalation`}>Show in the access map, with its attack paths</a>
            </p>
            <AgentForm key={`${a.id}-${a.version}-${editing}`} open={editing} agent={a} onClose={() => { setEditing(false); reload(); }} onSaved={() => undefined} />
            <ConfirmDialog
              title={`Delete ${a.name}?`}
              open={deleting}
              onClose={() => setDeleting(false)}
              confirmLabel="Delete agent"
              onConfirm={async () => {
                await api('DELETE', `/v1/agents/${a.id}?version=${a.version}`);
                navigate('/agents');
              }}
            >
              <p>The agent and its registration are removed. Its audit records stay in the ledger.</p>
            </ConfirmDialog>
          </>
        )}
      </Show>
    </section>
  );
}
