/**
 * Child-process entry for a baseline server, so it never shares an event loop with the harness.
 * argv[2] is a JSON BaselineConfig; prints one JSON line `{"ready":true,"port":…,"engine":…}` on
 * stdout once listening, or `{"error":…}` and exits 3.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

export interface BaselineRoute {
  body: string;
  contentType: string;
}

export interface BaselineConfig {
  kind: 'uws' | 'node';
  certPath?: string;
  keyPath?: string;
  /** exact-path answers (e.g. the same bytes svc returns); anything else gets `ok` */
  routes: Record<string, BaselineRoute>;
}

type Uws = typeof import('uWebSockets.js');

function say(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function startUws(cfg: BaselineConfig): void {
  const uws = createRequire(import.meta.url)('uWebSockets.js') as Uws;
  // Only the native binary exports SSLApp; the package's pure-Node fallback does not.
  if (typeof (uws as { SSLApp?: unknown }).SSLApp !== 'function') {
    say({ error: 'uWebSockets.js loaded its pure-Node fallback engine, not the native one' });
    process.exit(3);
  }
  const app = cfg.certPath && cfg.keyPath ? uws.SSLApp({ cert_file_name: cfg.certPath, key_file_name: cfg.keyPath }) : uws.App();
  for (const [path, route] of Object.entries(cfg.routes)) {
    app.get(path, (res) => {
      res.cork(() => {
        res.writeHeader('content-type', route.contentType);
        res.end(route.body);
      });
    });
  }
  app.get('/*', (res) => {
    res.end('ok');
  });
  app.listen('127.0.0.1', 0, (token) => {
    if (!token) {
      say({ error: 'uWS could not listen' });
      process.exit(3);
    }
    say({ ready: true, port: uws.us_socket_local_port(token), engine: 'uws-native', tls: Boolean(cfg.certPath) });
    const stop = (): void => {
      uws.us_listen_socket_close(token);
      process.exit(0);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

function startNode(cfg: BaselineConfig): void {
  const routes = new Map(Object.entries(cfg.routes));
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routes.get(path);
    if (route) res.writeHead(200, { 'content-type': route.contentType, 'content-length': Buffer.byteLength(route.body) });
    res.end(route ? route.body : 'ok');
  };
  const tls = Boolean(cfg.certPath && cfg.keyPath);
  const server = tls
    ? createHttps({ cert: readFileSync(cfg.certPath as string), key: readFileSync(cfg.keyPath as string) }, handler)
    : createHttp(handler);
  server.listen(0, '127.0.0.1', () => {
    say({ ready: true, port: (server.address() as AddressInfo).port, engine: tls ? 'node:https' : 'node:http', tls });
  });
  const stop = (): void => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as BaselineConfig;
if (cfg.kind === 'uws') startUws(cfg);
else if (cfg.kind === 'node') startNode(cfg);
else {
  say({ error: `unknown baseline kind ${JSON.stringify(cfg.kind)}` });
  process.exit(3);
}
