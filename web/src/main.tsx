/** The console's entry: boot (server info, session, whoami), the shell, sign-in, step-up. */
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import './styles.css';
import { api, ApiError, onExpired, onStepUp, session, type Me, type ServerInfo } from './api';
import { AppContext, type AppState, type TenantChoice } from './app-context';
import { PAGES } from './pages';
import { interceptLinks, navigate, useLocation } from './router';
import { ErrorBox, Loading } from './ui';
import { LoginPage, SetupPage } from './pages/login';
import { StepUpDialog } from './step-up-dialog';

const TENANT_KEY = 'svc.tenant';

type Boot = { state: 'loading' } | { state: 'error'; error: Error } | { state: 'setup'; info: ServerInfo } | { state: 'anonymous'; info: ServerInfo; expired: boolean } | { state: 'in'; info: ServerInfo; me: Me; tenants: TenantChoice[] };

async function loadMe(): Promise<{ me: Me; tenants: TenantChoice[] }> {
  const me = await api<Me>('GET', '/v1/auth/whoami', undefined, { noTenant: true });
  const names = new Map<string, string>();
  let all: TenantChoice[] = me.grants.map((g) => ({ id: g.tenant, name: g.tenant.slice(0, 8), role: g.role }));
  if (me.superadmin) {
    try {
      const orgs = await api<{ items: Array<{ id: string; name: string }> }>('GET', '/v1/system/orgs?limit=200', undefined, { noTenant: true });
      for (const o of orgs.items) names.set(o.id, o.name);
      for (const o of orgs.items) if (!all.some((t) => t.id === o.id)) all.push({ id: o.id, name: o.name, role: 'owner (superadmin)' });
    } catch {
      /* names are a nicety */
    }
  }
  all = all.map((t) => ({ ...t, name: names.get(t.id) ?? t.name }));
  return { me, tenants: all };
}

function pickTenant(tenants: TenantChoice[]): string | undefined {
  const fromUrl = new URLSearchParams(window.location.search).get('tenant');
  const saved = fromUrl ?? window.localStorage.getItem(TENANT_KEY);
  return tenants.find((t) => t.id === saved)?.id ?? tenants[0]?.id;
}

function App() {
  const loc = useLocation();
  const [boot, setBoot] = useState<Boot>({ state: 'loading' });
  const [tenant, setTenant] = useState<string | undefined>();

  const start = async (expired = false) => {
    try {
      // Both at once: the overview's time to interactive is a chain of round trips.
      const [info, s] = await Promise.all([
        api<ServerInfo>('GET', '/v1/server-info', undefined, { anonymous: true, noTenant: true }),
        api<{ csrf_token: string }>('GET', '/v1/m/identity/browser-session', undefined, { anonymous: true, noTenant: true }).catch((e: unknown) => e as Error),
      ]);
      if (info.setup_required) return setBoot({ state: 'setup', info });
      if (s instanceof Error) {
        if (s instanceof ApiError && (s.status === 401 || s.status === 400 || s.code === 'setup_required')) return setBoot({ state: 'anonymous', info, expired });
        throw s;
      }
      session.csrf = s.csrf_token;
      const { me, tenants } = await loadMe();
      const t = pickTenant(tenants);
      session.tenant = t;
      setTenant(t);
      setBoot({ state: 'in', info, me, tenants });
    } catch (e) {
      setBoot({ state: 'error', error: e as Error });
    }
  };

  useEffect(() => {
    onExpired(() => {
      session.csrf = undefined;
      setBoot((b) => (b.state === 'in' ? { state: 'anonymous', info: b.info, expired: true } : b));
    });
    void start();
  }, []);

  const state: AppState | null = useMemo(() => {
    if (boot.state !== 'in') return null;
    const grant = boot.me.grants.find((g) => g.tenant === tenant);
    const perms = new Set(grant?.permissions ?? []);
    const superOwner = boot.me.superadmin && !grant && tenant !== undefined;
    return {
      me: boot.me,
      info: boot.info,
      tenant,
      tenants: boot.tenants,
      // A superadmin acts as owner in a tenant without a grant (src/auth/authenticator.ts roleIn).
      can: (p) => (p.startsWith('system:') ? boot.me.superadmin : superOwner || perms.has(p)),
      refreshMe: async () => {
        const { me, tenants } = await loadMe();
        setBoot({ state: 'in', info: boot.info, me, tenants });
      },
    };
  }, [boot, tenant]);

  if (boot.state === 'loading') return <Loading what="the console" />;
  if (boot.state === 'error') return <main class="center"><ErrorBox error={boot.error} retry={() => void start()} /></main>;
  if (boot.state === 'setup') return <SetupPage onDone={() => void start()} />;
  if (boot.state === 'anonymous') {
    return (
      <LoginPage
        expired={boot.expired}
        onSignedIn={(csrf) => {
          session.csrf = csrf;
          const next = new URLSearchParams(window.location.search).get('next');
          if (loc.path === '/login' || loc.path === '/') navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/overview', true);
          void start();
        }}
      />
    );
  }
  if (!state) return null;

  const segments = loc.path.split('/').filter(Boolean);
  if (segments.length === 0 || segments[0] === 'login' || segments[0] === 'setup') {
    navigate('/overview', true);
    return null;
  }
  const def = PAGES.find((p) => p.section === segments[0]);
  const visible = PAGES.filter((p) => !p.needs || state.can(p.needs));
  const switchTenant = (id: string) => {
    session.tenant = id;
    window.localStorage.setItem(TENANT_KEY, id);
    setTenant(id);
    const q = new URLSearchParams(window.location.search);
    if (q.has('tenant')) {
      q.delete('tenant');
      navigate(window.location.pathname + (q.toString() ? `?${q}` : ''), true);
    }
  };
  const signOut = async () => {
    try {
      await api('DELETE', '/v1/m/identity/browser-session', undefined, { noTenant: true });
    } finally {
      session.csrf = undefined;
      navigate('/login', true);
      setBoot({ state: 'anonymous', info: boot.info, expired: false });
    }
  };
  const Page = def?.component;
  return (
    <AppContext.Provider value={state}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/overview">
          svc
        </a>
        <div class="tenant">
          <label for="tenant-switch">Tenant</label>
          <select id="tenant-switch" value={tenant} onChange={(e) => switchTenant((e.target as HTMLSelectElement).value)}>
            {state.tenants.map((t) => (
              <option value={t.id} key={t.id}>
                {t.name} · {t.role}
              </option>
            ))}
          </select>
        </div>
        <span class="who" data-testid="who">
          {boot.me.superadmin ? 'superadmin · ' : ''}AAL{boot.me.aal ?? 1}
        </span>
        <button type="button" id="sign-out" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="Main">
          <ul>
            {visible.map((p) => (
              <li key={p.section}>
                <a href={`/${p.section}`} aria-current={p.section === segments[0] ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1} key={tenant}>
          {Page ? <Page loc={loc} rest={segments.slice(1).map(decodeURIComponent)} /> : <ErrorBox error={new ApiError(404, 'not_found', `no page ${loc.path}`)} />}
        </main>
      </div>
      <StepUpDialog />
    </AppContext.Provider>
  );
}

interceptLinks();
render(<App />, document.getElementById('app') as HTMLElement);
void onStepUp;
