/**
 * `svc auth login --sso`: the native-app flow of RFC 8252. A one-shot listener on a loopback port
 * receives the provider's redirect; the server holds the PKCE verifier and nonce and exchanges the
 * code (`/v1/m/identity/sso/start` and `/complete`), so the CLI never sees a client secret.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import type { HttpClient } from '../../client/http-client.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

const PAGE =
  '<!doctype html><meta charset="utf-8"><title>svc</title><p>Signed in. You can close this window and return to the terminal.</p>';

/** Runs the browser round trip and returns the session token. */
export async function ssoLogin(client: HttpClient, stderr: Writable, waitMs = 5 * 60_000): Promise<string> {
  let resolveCb!: (q: URLSearchParams) => void;
  const got = new Promise<URLSearchParams>((r) => (resolveCb = r));
  const listener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
    resolveCb(url.searchParams);
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  try {
    const redirect = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const started = (await client.request('POST', '/v1/m/identity/sso/start', { body: { redirect_uri: redirect } })).body as {
      authorization_url: string;
      state: string;
    };
    stderr.write(`Open this URL in a browser to sign in:\n  ${started.authorization_url}\nwaiting for the redirect to ${redirect} …\n`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new CliError(ExitCode.Err, 'sso_timeout', `no redirect from the provider within ${Math.round(waitMs / 1000)} s`)),
        waitMs,
      );
    });
    const q = await Promise.race([got, timeout]).finally(() => clearTimeout(timer));
    const error = q.get('error');
    if (error)
      throw new CliError(
        ExitCode.Auth,
        'sso_refused',
        `the provider refused the login: ${error}${q.get('error_description') ? ` (${q.get('error_description')})` : ''}`,
      );
    const code = q.get('code');
    if (!code || q.get('state') !== started.state)
      throw new CliError(ExitCode.Auth, 'sso_bad_state', 'the redirect did not carry this login’s state and a code');
    const iss = q.get('iss');
    const done = (
      await client.request('POST', '/v1/m/identity/sso/complete', { body: { state: started.state, code, ...(iss ? { iss } : {}) } })
    ).body as { token: string };
    return done.token;
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}
