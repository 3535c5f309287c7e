/**
 * A real OpenID provider (`oidc-provider`, pinned in devDependencies) on loopback for the SSO tests:
 * one confidential native client (loopback redirect URIs, any port, RFC 8252), its built-in login and
 * consent pages, and accounts whose claims the test chooses.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

// The provider is on loopback: SSO discovery goes through the egress guard, which allows loopback
// only under the development flag (inherited by the servers the tests start).
process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** claims by login name; the login page accepts any password */
  accounts: Map<string, Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startProvider(
  opts: { clientId?: string; clientSecret?: string; publicClient?: boolean } = {},
): Promise<TestProvider> {
  const clientId = opts.clientId ?? 'svc-console';
  const clientSecret = opts.clientSecret ?? 'provider-client-secret-0123456789abcdef';
  const accounts = new Map<string, Record<string, unknown>>();
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        ...(opts.publicClient ? {} : { client_secret: clientSecret }),
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        // A public client (PKCE only) for servers that hold no client secret (replicas with their own secrets keys).
        token_endpoint_auth_method: opts.publicClient ? 'none' : 'client_secret_post',
      },
    ],
    cookies: { keys: ['test-cookie-key-0123456789'] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx: unknown, sub: string) => {
      const claims = accounts.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: () => ({ sub, ...claims }) };
    },
  });
  provider.on('server_error', (_ctx: unknown, err: Error) => process.stderr.write(`oidc-provider: ${err.stack}\n`));
  server.on('request', provider.callback());
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    stop: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/**
 * The provider's own login and consent pages driven over plain HTTP (no browser): follows its
 * redirects with its cookies, posts the login form (any password) and the consent form, and stops at
 * the redirect to `redirectPrefix` (the caller's loopback callback), whose query it returns unfetched.
 */
export async function providerLogin(authorizationUrl: string, login: string, redirectPrefix: string): Promise<URLSearchParams> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = (pair as string).indexOf('=');
      jar.set((pair as string).slice(0, i).trim(), (pair as string).slice(i + 1));
    }
  };
  let url = authorizationUrl;
  let init: RequestInit = { method: 'GET' };
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(redirectPrefix)) return new URL(url).searchParams;
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers ?? {}), cookie: cookieHeader() } });
    remember(res);
    const location = res.headers.get('location');
    if (location) {
      await res.arrayBuffer();
      url = new URL(location, url).toString();
      init = { method: 'GET' };
      continue;
    }
    const html = await res.text();
    const form = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(html);
    const prompt = /name="prompt" value="([a-z]+)"/.exec(html)?.[1];
    if (res.status !== 200 || !form || !prompt)
      throw new Error(`provider page ${url} answered ${res.status} without a form: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams({ prompt, ...(prompt === 'login' ? { login, password: 'any password' } : {}) });
    url = new URL((form[1] as string).replace(/&amp;/g, '&'), url).toString();
    init = { method: 'POST', body: fields.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  }
  throw new Error('the provider kept redirecting');
}
