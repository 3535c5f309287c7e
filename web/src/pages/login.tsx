/** Sign-in (the session lands in an HttpOnly cookie) and the first-start setup form. */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, Field, useAction } from '../ui';

export function LoginPage(props: { expired: boolean; onSignedIn: (csrf: string) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const s = await api<{ csrf_token: string }>('POST', '/v1/m/identity/browser-session', { email: email.trim(), password }, { anonymous: true, noTenant: true });
      setPassword('');
      props.onSignedIn(s.csrf_token);
    });
  };
  return (
    <main class="center" id="main">
      <form class="card narrow" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to svc</h1>
        {props.expired && (
          <p class="note" role="status">
            Your session ended. Sign in again to continue.
          </p>
        )}
        <Field label="E-mail" name="email" type="email" value={email} onInput={setEmail} required autocomplete="username" />
        <Field label="Password" name="password" type="password" value={password} onInput={setPassword} required autocomplete="current-password" />
        {action.error && <ErrorBox error={action.error} />}
        <button type="submit" class="primary" disabled={action.busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}

export function SetupPage(props: { onDone: () => void }) {
  const [token, setToken] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [organization, setOrganization] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api('POST', '/v1/setup', { token: token.trim(), email: email.trim(), password, ...(organization.trim() ? { organization: organization.trim() } : {}) }, { anonymous: true, noTenant: true });
      props.onDone();
    });
  };
  return (
    <main class="center" id="main">
      <form class="card narrow" onSubmit={submit} aria-labelledby="setup-title">
        <h1 id="setup-title">Set up svc</h1>
        <p>This server has no user yet. Paste the one-time setup token (<code>svcst_…</code>) that <code>svc serve</code> printed on its standard output, and create the first organization and its superadmin.</p>
        <Field label="Setup token" name="token" type="password" value={token} onInput={setToken} required autocomplete="off" />
        <Field label="Organization" name="organization" value={organization} onInput={setOrganization} />
        <Field label="Your e-mail" name="email" type="email" value={email} onInput={setEmail} required autocomplete="username" />
        <Field label="Password (12 characters or more)" name="password" type="password" value={password} onInput={setPassword} required autocomplete="new-password" />
        {action.error && <ErrorBox error={action.error} />}
        <button type="submit" class="primary" disabled={action.busy}>
          Create and continue
        </button>
      </form>
    </main>
  );
}
