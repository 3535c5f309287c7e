/** Administration: users, API keys (secret shown once), tenants, memberships, security keys. */
import { useState } from 'preact/hooks';
import { api, listAll } from '../api';
import { useApp } from '../app-context';
import type { PageProps } from '../pages';
import { ConfirmDialog, Dialog, ErrorBox, Field, fmtTime, Show, useAction, useAsync } from '../ui';
import { registerAuthenticator } from '../webauthn';

const TABS = [
  { id: 'users', title: 'Users', needs: 'user:read' },
  { id: 'api-keys', title: 'API keys', needs: 'token:read' },
  { id: 'members', title: 'Memberships', needs: 'membership:read' },
  { id: 'tenants', title: 'Tenants', needs: 'system:admin' },
  { id: 'security-keys', title: 'Security keys', needs: 'self:read' },
];
const ROLES = ['viewer', 'editor', 'admin', 'owner'];

export function AdminPage({ rest }: PageProps) {
  const app = useApp();
  const tabs = TABS.filter((t) => app.can(t.needs));
  const tab = tabs.find((t) => t.id === rest[0]) ?? tabs[0];
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Administration</h1>
      <nav aria-label="Administration" class="tabs">
        {tabs.map((t) => (
          <a key={t.id} href={`/admin/${t.id}`} aria-current={t.id === tab?.id ? 'page' : undefined}>
            {t.title}
          </a>
        ))}
      </nav>
      {tab?.id === 'users' && <Users />}
      {tab?.id === 'api-keys' && <ApiKeys />}
      {tab?.id === 'members' && <Members />}
      {tab?.id === 'tenants' && <Tenants />}
      {tab?.id === 'security-keys' && <SecurityKeys />}
    </section>
  );
}

function Users() {
  const app = useApp();
  const [data, reload] = useAsync(() => listAll<{ id: string; email: string; role: string; superadmin: boolean; status: string; created_at: string }>('/v1/users'), []);
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState('viewer');
  const action = useAction();
  return (
    <div>
      {app.can('user:admin') && (
        <button type="button" class="primary" onClick={() => setOpen(true)}>
          New user
        </button>
      )}
      <Show value={data} what="users" retry={reload} isEmpty={(d) => d.items.length === 0}>
        {(d) => (
          <table>
            <caption>Users of this tenant</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {d.items.map((u) => (
                <tr key={u.id}>
                  <td>{u.email}</td>
                  <td>
                    {u.role}
                    {u.superadmin ? ' · superadmin' : ''}
                  </td>
                  <td>{u.status}</td>
                  <td>{fmtTime(u.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <Dialog title="New user" open={open} onClose={() => setOpen(false)} id="user-form">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await api('POST', '/v1/users', { email, password, role });
              setOpen(false);
              reload();
            });
          }}
        >
          <Field label="E-mail" name="new-email" type="email" value={email} onInput={setEmail} required />
          <Field label="Initial password" name="new-password" type="password" value={password} onInput={setPassword} required autocomplete="new-password" />
          <Field label="Role" name="new-role" value={role} onInput={setRole} options={ROLES} />
          {action.error && <ErrorBox error={action.error} />}
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy}>
              Create user
            </button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}

interface Token {
  id: string;
  name: string;
  role: string | null;
  tenant: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at?: string | null;
}

function ApiKeys() {
  const app = useApp();
  const [data, reload] = useAsync(() => listAll<Token>('/v1/tokens'), []);
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [role, setRole] = useState('viewer');
  const [secret, setSecret] = useState<string | undefined>();
  const [revoking, setRevoking] = useState<Token | undefined>();
  const action = useAction();
  return (
    <div>
      {app.can('token:write') && (
        <button type="button" class="primary" id="issue-key" onClick={() => setOpen(true)}>
          Issue API key
        </button>
      )}
      <Show value={data} what="API keys" retry={reload} isEmpty={(d) => d.items.length === 0} empty="No API key yet.">
        {(d) => (
          <table>
            <caption>API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.items.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td>{t.role ?? '—'}</td>
                  <td>{fmtTime(t.created_at)}</td>
                  <td>{fmtTime(t.expires_at)}</td>
                  <td>
                    {app.can('token:write') && (
                      <button type="button" class="danger" aria-label={`Revoke ${t.name}`} onClick={() => setRevoking(t)}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <Dialog title={secret ? 'Copy your API key now' : 'Issue an API key'} open={open} onClose={() => { setOpen(false); setSecret(undefined); reload(); }} id="key-form">
        {secret ? (
          <div>
            <p>This is the only time the secret is shown. Store it in your secret manager.</p>
            <label for="key-secret">API key</label>
            <input id="key-secret" readOnly value={secret} class="mono" />
            <div class="actions">
              <button type="button" onClick={() => void navigator.clipboard?.writeText(secret)}>
                Copy
              </button>
              <button type="button" class="primary" onClick={() => { setOpen(false); setSecret(undefined); reload(); }}>
                Done
              </button>
            </div>
          </div>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void action.run(async () => {
                const issued = await api<{ token: string }>('POST', '/v1/tokens', { name, role, ...(app.tenant ? { tenant: app.tenant } : {}) });
                setSecret(issued.token);
                setName('');
              });
            }}
          >
            <Field label="Name" name="key-name" value={name} onInput={setName} required />
            <Field label="Role" name="key-role" value={role} onInput={setRole} options={ROLES} />
            {action.error && <ErrorBox error={action.error} />}
            <div class="actions">
              <button type="submit" class="primary" disabled={action.busy}>
                Issue
              </button>
            </div>
          </form>
        )}
      </Dialog>
      <ConfirmDialog
        title={`Revoke ${revoking?.name ?? ''}?`}
        open={revoking !== undefined}
        onClose={() => setRevoking(undefined)}
        confirmLabel="Revoke key"
        onConfirm={async () => {
          await api('DELETE', `/v1/tokens/${revoking?.id}`);
          reload();
        }}
      >
        <p>Anything using this key stops working at once.</p>
      </ConfirmDialog>
    </div>
  );
}

function Members() {
  const app = useApp();
  const [data, reload] = useAsync(() => listAll<{ user_id: string; email: string; role: string; status: string }>('/v1/members'), []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const action = useAction();
  return (
    <div>
      <Show value={data} what="members" retry={reload} isEmpty={(d) => d.items.length === 0}>
        {(d) => (
          <table>
            <caption>Members of this tenant</caption>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {d.items.map((m) => (
                <tr key={m.user_id}>
                  <td>{m.email}</td>
                  <td>{m.role}</td>
                  <td>{m.status}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      {app.can('membership:admin') && (
        <form
          class="filters"
          aria-label="Grant a membership"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              await api('POST', '/v1/memberships', { email, role });
              setEmail('');
              reload();
            });
          }}
        >
          <Field label="User e-mail" name="member-email" type="email" value={email} onInput={setEmail} required />
          <Field label="Role" name="member-role" value={role} onInput={setRole} options={ROLES} />
          <button type="submit" disabled={action.busy}>
            Grant or change membership
          </button>
          {action.error && <ErrorBox error={action.error} />}
        </form>
      )}
    </div>
  );
}

interface Org {
  id: string;
  name: string;
  region: string;
  status: string;
  created_at: string;
}

function Tenants() {
  const [data, reload] = useAsync(() => listAll<Org>('/v1/system/orgs'), []);
  const [editing, setEditing] = useState<Org | undefined>();
  const [region, setRegion] = useState('');
  const action = useAction();
  return (
    <div>
      <Show value={data} what="tenants" retry={reload} isEmpty={(d) => d.items.length === 0}>
        {(d) => (
          <table>
            <caption>Tenants (organizations)</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Region</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.items.map((o) => (
                <tr key={o.id}>
                  <td>{o.name}</td>
                  <td data-testid={`region-${o.id}`}>{o.region}</td>
                  <td>{o.status}</td>
                  <td>
                    <button type="button" aria-label={`Change region of ${o.name}`} onClick={() => { setEditing(o); setRegion(o.region); }}>
                      Change region
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <Dialog title={`Region of ${editing?.name ?? ''}`} open={editing !== undefined} onClose={() => setEditing(undefined)} id="region-form">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              // Needs AAL3: a 403 step_up_required opens the security-key dialog, then this retries.
              await api('PUT', `/v1/system/orgs/${editing?.id}/region`, { region }, { noTenant: true });
              setEditing(undefined);
              reload();
            });
          }}
        >
          <Field label="Region" name="region" value={region} onInput={setRegion} required />
          <p class="note">Changing a tenant's region needs a security-key step-up.</p>
          {action.error && <ErrorBox error={action.error} />}
          <div class="actions">
            <button type="submit" class="primary" disabled={action.busy}>
              Save region
            </button>
          </div>
        </form>
      </Dialog>
    </div>
  );
}

function SecurityKeys() {
  const [data, reload] = useAsync(() => api<{ items: Array<{ id: string; name: string; created_at: string; last_used_at: string | null; device_type: string }> }>('GET', '/v1/m/identity/webauthn/credentials', undefined, { noTenant: true }), []);
  const [name, setName] = useState('security key');
  const [deleting, setDeleting] = useState<string | undefined>();
  const action = useAction();
  return (
    <div>
      <p>Security keys (WebAuthn) confirm sensitive actions: a step-up to assurance level 3 for 15 minutes.</p>
      <Show value={data} what="security keys" retry={reload} isEmpty={(d) => d.items.length === 0} empty="No security key registered yet.">
        {(d) => (
          <table>
            <caption>Your security keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Registered</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.items.map((c) => (
                <tr key={c.id}>
                  <td>{c.name}</td>
                  <td>{c.device_type}</td>
                  <td>{fmtTime(c.created_at)}</td>
                  <td>{fmtTime(c.last_used_at)}</td>
                  <td>
                    <button type="button" class="danger" aria-label={`Remove ${c.name}`} onClick={() => setDeleting(c.id)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Show>
      <form
        class="filters"
        aria-label="Register a security key"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await registerAuthenticator(name);
            reload();
          });
        }}
      >
        <Field label="Key name" name="key-label" value={name} onInput={setName} required />
        <button type="submit" disabled={action.busy}>
          Register a security key
        </button>
        {action.error && <ErrorBox error={action.error} />}
      </form>
      <ConfirmDialog
        title="Remove this security key?"
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        confirmLabel="Remove key"
        onConfirm={async () => {
          await api('DELETE', `/v1/m/identity/webauthn/credentials/${deleting}`, undefined, { noTenant: true });
          reload();
        }}
      >
        <p>It can no longer be used for step-up. Removing a key needs a step-up itself.</p>
      </ConfirmDialog>
    </div>
  );
}
