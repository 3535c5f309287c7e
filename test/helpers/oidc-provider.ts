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

export async function startProvider(opts: { clientId?: string; clientSecret?: string } = {}): Promise<TestProvider> {
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
        client_secret: clientSecret,
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
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
