/** `svc serve`: the control-plane engine (HTTPS REST + gRPC + web UI). */
import { writeSync } from 'node:fs';
import { Command, Option } from 'clipanion';
import type { ModuleManifest } from '../../contract/manifest.js';
import { ConfigError, resolveServeConfig, DEFAULTS } from '../../serve/config.js';

export class ServeCommand extends Command {
  static override paths = [['serve']];

  static override usage = Command.Usage({
    category: 'Server',
    description: 'run the control-plane engine: HTTPS REST API, gRPC and the web UI',
    details: `
      Starts the engine on its embedded SQLite store (or Postgres with \`--store postgres --dsn …\`).

      TLS is on by default. Without \`--tls-cert\`/\`--tls-key\`, a self-signed ECDSA P-256 certificate is
      generated once into \`<data-dir>/tls/\` and reused; its SHA-256 fingerprint and its SPKI pin
      (\`pin_sha256\`) are logged so clients can trust it (\`curl --cacert\`, \`curl --pinnedpubkey sha256//<pin>\`,
      \`svc --pin-sha256 <pin>\`).

      Both listeners bind 127.0.0.1 by default. \`--insecure\` (plaintext HTTP and gRPC) and \`--seed-demo\`
      (a demo administrator with a public password) are refused on any non-loopback bind.

      Every flag has a \`SERVICE_*\` environment variable; a flag wins over the variable. Logs are JSON lines
      on stderr. SIGINT/SIGTERM drain in-flight requests, then close the store.

      A listener never shares its port: when another process (another \`svc serve\` included) already
      listens on the HTTP or gRPC port, on that address or a wildcard one, startup fails with exit 1 and
      a message naming the address (\`cannot listen on HOST:PORT\`, \`cannot listen for gRPC on HOST:PORT\`).

      Replicas on one Postgres database (docs/scale-out.md) must serve one certificate: a replica whose certificate
      differs from a live replica's refuses to start (exit 2) unless \`SERVICE_TLS_ROLLING_CHANGE=1\` (a certificate
      change made replica by replica); one whose audit key is not the deployment's active key refuses with exit 5; one
      whose secrets key (\`SERVICE_SECRETS_KEY_FILE\`) cannot open the deployment's sealed values refuses with exit 2.

      Exit codes: 0 after a clean shutdown, 2 when the configuration is refused, 5 when the audit key is not the
      deployment's, 1 on any other startup failure (the process exits at once, whatever the failure left open).
      With \`SERVICE_BUS=nats\`, \`/readyz\` answers 503 while the bus is disconnected.
    `,
    examples: [
      ['Start on the defaults (SQLite, TLS, loopback)', '$0 serve'],
      ['Start on Postgres', '$0 serve --store postgres --dsn postgres://svc@127.0.0.1:5432/svc'],
      ['Bring your own certificate', '$0 serve --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem'],
    ],
  });

  listen = Option.String('--listen', {
    description: `HTTP bind host:port (SERVICE_LISTEN; default ${DEFAULTS.listen}); https:// or http:// may prefix it`,
  });
  grpcListen = Option.String('--grpc-listen', {
    description: `gRPC bind host:port (SERVICE_GRPC_LISTEN; default ${DEFAULTS.grpcListen}); grpcs:// or grpc:// may prefix it`,
  });
  dataDir = Option.String('--data-dir', {
    description: 'data directory: database, keys, certificates (SERVICE_DATA_DIR; default $XDG_DATA_HOME/svc or ~/.local/share/svc)',
  });
  tlsCert = Option.String('--tls-cert', { description: 'PEM certificate (chain) to serve (SERVICE_TLS_CERT); needs --tls-key' });
  tlsKey = Option.String('--tls-key', { description: 'PEM private key of --tls-cert, mode 0600 (SERVICE_TLS_KEY)' });
  grpcClientCa = Option.String('--grpc-client-ca', {
    description: 'PEM CA bundle; gRPC clients must present a certificate it signed (mutual TLS) (SERVICE_GRPC_CLIENT_CA)',
  });
  insecure = Option.Boolean('--insecure', { description: 'plaintext HTTP and gRPC, loopback binds only (SERVICE_INSECURE)' });
  seedDemo = Option.Boolean('--seed-demo', {
    description: 'provision a synthetic estate and a demo administrator with a public password; loopback binds only (SERVICE_SEED_DEMO)',
  });
  store = Option.String('--store', { description: 'sqlite (default) or postgres (SERVICE_STORE)' });
  dsn = Option.String('--dsn', { description: 'Postgres connection string for --store postgres (SERVICE_DSN)' });
  logLevel = Option.String('--log-level', { description: 'fatal|error|warn|info|debug|trace|silent (SERVICE_LOG_LEVEL; default info)' });

  /** manifests composed after the registered ones; empty for `svc serve` (a test's launcher subclass sets its module) */
  protected readonly extraManifests: readonly ModuleManifest[] = [];

  override async execute(): Promise<number> {
    let config;
    try {
      config = resolveServeConfig({
        listen: this.listen,
        grpcListen: this.grpcListen,
        dataDir: this.dataDir,
        tlsCert: this.tlsCert,
        tlsKey: this.tlsKey,
        grpcClientCa: this.grpcClientCa,
        insecure: this.insecure,
        seedDemo: this.seedDemo,
        store: this.store,
        dsn: this.dsn,
        logLevel: this.logLevel,
      });
    } catch (err) {
      if (err instanceof ConfigError) {
        this.context.stderr.write(`svc serve: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    // Loaded here, not at the top: every other command would pay for the server's imports.
    const [{ createLogger }, { startServer }, { limitHeapGrowth }] = await Promise.all([
      import('../../serve/logger.js'),
      import('../../serve/server.js'),
      import('../../serve/heap-growth.js'),
    ]);
    limitHeapGrowth();
    const { log, flush } = createLogger(config.logLevel);
    // Handlers from the first moment: a signal while the server starts (it logs 'listening' before
    // its start resolves) is kept and handled once it has started, never Node's default kill.
    const early: NodeJS.Signals[] = [];
    const keep = (signal: NodeJS.Signals) => void early.push(signal);
    process.on('SIGINT', keep);
    process.on('SIGTERM', keep);
    let server;
    try {
      server = await startServer(config, log, this.extraManifests);
      flush();
      this.context.stdout.write(readyBanner(server));
    } catch (err) {
      log.fatal(
        { err: { message: (err as Error).message, code: (err as { code?: string }).code } },
        `startup failed: ${(err as Error).message}`,
      );
      flush();
      // The reason must reach the operator even if the async log stream could not flush in time.
      writeSync(2, `svc serve: startup failed: ${(err as Error).message}\n`);
      const exit = startupExitCode((err as { code?: string }).code);
      // Exit now, not when the event loop drains: what a failed start left open must not keep a
      // process that serves nothing alive (the NATS client leaves its socket open when a port
      // accepts TCP and never speaks), or its supervisor never restarts it.
      flush();
      process.exit(exit);
    }
    return new Promise<number>((resolve) => {
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        signals++;
        if (signals > 1) {
          log.warn({ signal }, 'second signal: exiting without waiting for the drain');
          flush();
          process.exit(1);
        }
        // Exit explicitly once drained: idle keep-alive sockets must not keep the process alive.
        server
          .shutdown(signal)
          .then(
            () => 0,
            (err: unknown) => {
              log.error({ err }, 'shutdown failed');
              return 1;
            },
          )
          .then((code) => {
            flush();
            resolve(code);
            process.exit(code);
          });
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      process.off('SIGINT', keep);
      process.off('SIGTERM', keep);
      for (const signal of early) onSignal(signal);
    });
  }
}

/**
 * The exit code of a failed start: 5 for a replica whose audit key is not the deployment's active
 * key (a conflict), 2 for a refused configuration (a TLS certificate other than the live replicas',
 * a secrets key that does not open the deployment's sealed values), 1 otherwise.
 */
function startupExitCode(code: string | undefined): number {
  if (code === 'key_not_active') return 5;
  return code === 'tls_mismatch' || code === 'secrets_key_mismatch' ? 2 : 1;
}

/** A few lines on stdout for the human who just started the server (logs stay JSON on stderr). */
function readyBanner(server: { url: string; grpcPort: number; tls?: { certPath: string; pinSha256: string } }): string {
  const url = new URL(server.url);
  const lines = [`svc serve is ready: ${server.url} (gRPC on port ${server.grpcPort})`];
  if (server.tls) {
    const named = `https://localhost:${url.port}`;
    lines.push(`  trust the certificate:  curl --cacert ${server.tls.certPath} ${named}/healthz`);
    lines.push(`  or pin its public key:  curl -k --pinnedpubkey sha256//${server.tls.pinSha256} ${server.url}/healthz`);
  }
  return lines.join('\n') + '\n';
}
