/** `svc collector`: the edge collector (spec "What the service does" item 6); logic in src/collector. */
import { isIP } from 'node:net';
import { Command, Option } from 'clipanion';

export class CollectorCommand extends Command {
  static override paths = [['collector']];

  static override usage = Command.Usage({
    category: 'Server',
    description: 'run an edge collector: read local sources, spool, push observations to the core over gRPC',
    details: `
      Reads the sources listed in \`--config\` (JSON-lines files followed across rotation and truncation,
      directories of JSON files), writes every batch to an fsync'd on-disk spool first, and pushes the spool
      to the core's \`olivares.api.v1.Ingest\` service. A batch leaves the spool only once the core acked it
      as durable; after a crash or a lost connection unacked batches are sent again (the core counts each
      batch id once). Reconnects use jittered exponential backoff. Opens no listener.

      Authentication: a bearer token of a principal holding \`ingest:write\` (\`--token-file\` or
      \`SERVICE_INGEST_TOKEN\`), plus a client certificate when the core enforces mutual TLS. The token is
      never sent over plaintext: plaintext needs \`--insecure\` (development only).

      SIGTERM/SIGINT drain: sources stop, the spool is pushed for up to 10 s, whatever is left stays spooled.
      Exit codes: 0 after a clean drain, 2 when the flags are refused, 1 otherwise.
    `,
    examples: [
      [
        'Push to a core with mutual TLS',
        '$0 collector --core-addr core.example:8444 --ca ca.pem --client-cert me.pem --client-key me.key --token-file ingest.token ' +
          '--config sources.yaml',
      ],
    ],
  });

  coreAddr = Option.String('--core-addr', { description: 'host:port of the core gRPC listener (required)' });
  ca = Option.String('--ca', { description: "PEM CA for the core's server certificate (default: system trust)" });
  clientCert = Option.String('--client-cert', { description: 'PEM client certificate (mutual TLS); needs --client-key' });
  clientKey = Option.String('--client-key', { description: 'PEM private key of --client-cert' });
  serverName = Option.String('--server-name', {
    description: "name to verify the core's certificate against (default: the --core-addr host)",
  });
  tokenFile = Option.String('--token-file', { description: 'file holding the bearer token (else SERVICE_INGEST_TOKEN)' });
  insecure = Option.Boolean('--insecure', { description: 'plaintext push, development only' });
  config = Option.String('--config', { description: 'sources file (YAML or JSON), see docs/collector.md (required)' });
  spoolDir = Option.String('--spool-dir', {
    description: 'spool directory (SERVICE_COLLECTOR_SPOOL_DIR; default $XDG_STATE_HOME/svc/collector-spool)',
  });
  logLevel = Option.String('--log-level', { description: 'fatal|error|warn|info|debug (SERVICE_LOG_LEVEL; default info)' });

  override async execute(): Promise<number> {
    const [{ resolveCollectorOptions, CollectorUsageError }, { loadCollectorConfig, CollectorConfigError }] = await Promise.all([
      import('../../collector/options.js'),
      import('../../collector/config.js'),
    ]);
    let opts;
    let config;
    try {
      opts = resolveCollectorOptions({
        coreAddr: this.coreAddr,
        ca: this.ca,
        clientCert: this.clientCert,
        clientKey: this.clientKey,
        serverName: this.serverName,
        tokenFile: this.tokenFile,
        insecure: this.insecure,
        config: this.config,
        spoolDir: this.spoolDir,
      });
      config = loadCollectorConfig(opts.configFile);
    } catch (err) {
      if (err instanceof CollectorUsageError || err instanceof CollectorConfigError) {
        this.context.stderr.write(`svc collector: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
    if (opts.tls !== null && !opts.tls.serverName && isIP(hostOf(opts.coreAddr)) !== 0) dropWarning('DEP0123');
    const [{ createLogger }, { Collector }] = await Promise.all([import('../../serve/logger.js'), import('../../collector/collector.js')]);
    const { log, flush } = createLogger(this.logLevel ?? process.env['SERVICE_LOG_LEVEL'] ?? 'info');
    let collector;
    try {
      collector = new Collector({ config, coreAddr: opts.coreAddr, tls: opts.tls, token: opts.token, spoolDir: opts.spoolDir, log });
    } catch (err) {
      log.fatal({ err: { message: (err as Error).message } }, `collector failed to start: ${(err as Error).message}`);
      flush();
      return 1;
    }
    collector.start();
    log.info(
      {
        core: opts.coreAddr,
        tls: opts.tls !== null,
        mtls: Boolean(opts.tls?.certPem),
        sources: config.sources.map((s) => s.name),
        spool: opts.spoolDir,
        unacked: collector.spool.size,
      },
      'collector running',
    );
    const running = collector;
    return new Promise<number>((resolve) => {
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        if (++signals > 1) {
          log.warn({ signal }, 'second signal: exiting without waiting for the drain (the spool keeps what is unacked)');
          flush();
          process.exit(1);
        }
        log.info({ signal }, 'draining');
        running.stop().then(
          () => {
            flush();
            resolve(0);
            process.exit(0);
          },
          (err: unknown) => {
            log.error({ err }, 'drain failed');
            flush();
            resolve(1);
            process.exit(1);
          },
        );
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
  }
}

/** The host of `host:port` or `[v6]:port`. */
function hostOf(address: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(address);
  return v6 ? (v6[1] as string) : address.replace(/:\d+$/, '');
}

/**
 * grpc-js always sends the target host as the TLS server name, and Node warns (DEP0123) when that is
 * an IP literal, which RFC 6066 does not allow in SNI. An IP is a legitimate core address and the
 * certificate is still verified against it, so this one warning is dropped; any other still shows.
 */
function dropWarning(code: string): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: unknown, ...rest: unknown[]) => {
    const first = rest[0];
    const given = typeof first === 'object' && first !== null ? (first as { code?: unknown }).code : rest[1];
    if (given === code) return;
    emit(warning, ...rest);
  }) as typeof process.emitWarning;
}
