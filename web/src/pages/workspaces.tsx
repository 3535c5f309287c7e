/** Workspaces: list with search in the URL, detail, create, edit (409 shown). The API has no delete. */
import { useState } from 'preact/hooks';
import { api, ApiError, listAll } from '../api';
import { useApp } from '../app-context';
import type { PageProps } from '../pages';
import { navigate, setQuery } from '../router';
import { Dialog, ErrorBox, Field, fmtTime, Show, useAction, useAsync } from '../ui';

interface Workspace {
  id: string;
  display_name: string;
  root_path: string;
  mount_mode: string;
  dlp_posture: string;
  read_cap_bytes: number;
  effective_read_cap_bytes: number;
  restricted_subpaths: string[];
  mount_target: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export function WorkspacesPage(props: PageProps) {
  return props.rest[0] ? <WorkspaceDetail id={props.rest[0]} /> : <WorkspaceList {...props} />;
}

function WorkspaceList({ loc }: PageProps) {
  const app = useApp();
  const q = loc.query.get('q') ?? '';
  const [creating, setCreating] = useState(false);
  const [data, reload] = useAsync(() => listAll<Workspace>('/v1/workspaces'), []);
  return (
    <section aria-labelledby="ws-title">
      <div class="head">
        <h1 id="ws-title">Workspaces</h1>
        {app.can('workspace:write') && (
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New workspace
          </button>
        )}
      </div>
      <div class="filters" role="search">
        <Field label="Search by name or path" name="q" value={q} onInput={(v) => setQuery({ q: v })} />
      </div>
      <Show value={data} what="workspaces" retry={reload} isEmpty={(d) => d.items.length === 0} empty="No workspace yet.">
        {(d) => {
          const needle = q.toLowerCase();
          const rows = d.items.filter((w) => !q || w.display_name.toLowerCase().includes(needle) || w.root_path.toLowerCase().includes(needle));
          if (rows.length === 0) return <p class="state empty">No workspace matches “{q}”.</p>;
          return (
            <table>
              <caption>{rows.length} workspaces</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Root path</th>
                  <th scope="col">Mount</th>
                  <th scope="col">DLP</th>
                  <th scope="col">Restricted</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((w) => (
                  <tr key={w.id}>
                    <td>
                      <a href={`/workspaces/${w.id}`}>{w.display_name}</a>
                    </td>
                    <td>
                      <code>{w.root_path}</code>
                    </td>
                    <td>{w.mount_mode}</td>
                    <td>{w.dlp_posture}</td>
                    <td>{w.restricted_subpaths.join(', ') || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          );
        }}
      </Show>
      <WorkspaceForm open={creating} onClose={() => setCreating(false)} onSaved={(w) => navigate(`/workspaces/${w.id}`)} />
    </section>
  );
}

function WorkspaceForm(props: { open: boolean; ws?: Workspace; onClose: () => void; onSaved: (w: Workspace) => void }) {
  const w = props.ws;
  const [name, setName] = useState(w?.display_name ?? '');
  const [root, setRoot] = useState(w?.root_path ?? '');
  const [mode, setMode] = useState(w?.mount_mode ?? 'rw');
  const [dlp, setDlp] = useState(w?.dlp_posture ?? 'label');
  const [restricted, setRestricted] = useState(w?.restricted_subpaths.join(', ') ?? '');
  const action = useAction();
  const conflict = action.error instanceof ApiError && action.error.status === 409;
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { root_path: root, mount_mode: mode, dlp_posture: dlp, restricted_subpaths: restricted.split(',').map((s) => s.trim()).filter(Boolean), ...(name ? { display_name: name } : {}) };
      const saved = w ? await api<Workspace>('PATCH', `/v1/workspaces/${w.id}`, { version: w.version, ...body }) : await api<Workspace>('POST', '/v1/workspaces', body);
      props.onSaved(saved);
      props.onClose();
    });
  };
  return (
    <Dialog title={w ? `Edit ${w.display_name}` : 'New workspace'} open={props.open} onClose={props.onClose} id="ws-form">
      <form onSubmit={submit}>
        <Field label="Display name" name="display_name" value={name} onInput={setName} hint="default: the last segment of the root path" />
        <Field label="Root path" name="root_path" value={root} onInput={setRoot} required />
        <Field label="Mount mode" name="mount_mode" value={mode} onInput={setMode} options={['rw', 'ro']} />
        <Field label="DLP posture" name="dlp_posture" value={dlp} onInput={setDlp} options={['label', 'deny', 'off']} />
        <Field label="Restricted subpaths" name="restricted" value={restricted} onInput={setRestricted} hint="comma-separated, relative to the root" />
        {conflict ? (
          <div class="state error" role="alert" id="conflict">
            <strong>Someone else changed this workspace</strong> since you opened it (version {w?.version} is no longer current). Nothing was saved. Close this form to load the current version, then apply your change again.
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

function WorkspaceDetail({ id }: { id: string }) {
  const app = useApp();
  const [data, reload] = useAsync(() => api<Workspace>('GET', `/v1/workspaces/${encodeURIComponent(id)}`), [id]);
  const [editing, setEditing] = useState(false);
  return (
    <section aria-labelledby="ws-detail-title">
      <p>
        <a href="/workspaces">← Workspaces</a>
      </p>
      <Show value={data} what="the workspace" retry={reload}>
        {(w) => (
          <>
            <div class="head">
              <h1 id="ws-detail-title">{w.display_name}</h1>
              {app.can('workspace:write') && (
                <button type="button" onClick={() => setEditing(true)}>
                  Edit
                </button>
              )}
            </div>
            <dl class="detail">
              <dt>ID</dt>
              <dd>
                <code>{w.id}</code>
              </dd>
              <dt>Root path</dt>
              <dd>
                <code>{w.root_path}</code>
              </dd>
              <dt>Mount</dt>
              <dd>
                {w.mount_mode} at <code>{w.mount_target}</code>
              </dd>
              <dt>DLP posture</dt>
              <dd>{w.dlp_posture}</dd>
              <dt>Read cap</dt>
              <dd>{w.effective_read_cap_bytes} bytes</dd>
              <dt>Restricted subpaths</dt>
              <dd>{w.restricted_subpaths.join(', ') || '—'}</dd>
              <dt>Version</dt>
              <dd>{w.version}</dd>
              <dt>Updated</dt>
              <dd>{fmtTime(w.updated_at)}</dd>
            </dl>
            <WorkspaceForm key={`${w.id}-${w.version}-${editing}`} open={editing} ws={w} onClose={() => { setEditing(false); reload(); }} onSaved={() => undefined} />
          </>
        )}
      </Show>
    </section>
  );
}
