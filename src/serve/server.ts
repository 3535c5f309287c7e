/**
 * Composition root of `svc serve`: TLS material, store, HTTP app, listeners, signals.
 * Everything is built here once and handed down; nothing below reaches for globals.
 */
import { mkdir, chmod, readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { buildInfo } from '../build-info.js';
import { App } from '../http/app.js';
import { listenHttp, loadUws, formatHostPort, type RunningHttp } from '../http/uws-adapter.js';
import { startGrpc, type RunningGrpc } from '../grpc/server.js';
import { allRoutes, composeManifests, eventCatalog, recordHooks } from '../routes.js';
import type { ModuleManifest } from '../contract/manifest.js';
import { EventBus } from '../events/bus.js';
import { loadSealer } from '../secrets/sealing.js';
import { checkSecretsKey } from '../secrets/key-check.js';
import { listEdges } from '../modules/accessmap/index.js';
import { buildOpenApiDocument } from '../contract/openapi.js';
import type { AnyRoute } from '../contract/route.js';
import { EventingRuntime } from '../modules/eventing/runtime.js';
import { startConnectors } from '../core/connectors/index.js';
import { registerBus } from '../events/bus-registry.js';
import { openStore, type Store, type StoreReadiness } from '../store/store.js';
import type { ServeConfig } from './config.js';
import { createMetrics } from './metrics.js';
import type { Services } from './services.js';
import { IdentityRuntime, rateLimitFromEnv } from '../auth/runtime.js';
import { createAuthenticator } from '../auth/authenticator.js';
import { pdpConfigFromEnv, selectPdp } from '../auth/pdp-select.js';
import { startIdentity } from '../core/setup/startup.js';
import { publishedAround, shareInvalidations } from '../auth/replica-invalidation.js';
import { webauthnSettings } from '../core/webauthn/routes.js';
import { loadOrCreateTls, type TlsMaterial } from './tls.js';
import { LedgerService } from '../ledger/ledger-service.js';
import { AuditExporter, exportSourceFor } from '../core/audit-export/exporter.js';
import { ed25519Engine } from '../ledger/ed25519-engine.js';
import { auditScopeAround } from './audit-scope.js';
import { holdDataDirShared } from './data-dir-lock.js';
import { joinReplicas, tlsRollingChangeFromEnv } from './replica-registry.js';

export interface RunningServer {
  httpPort: number;
  grpcPort: number;
  url: string;
  tls?: TlsMaterial;
  services: Services;
  /** drain and stop; idempotent */
  shutdown(reason: string): Promise<void>;
}

/**
 * Start everything or throw; on a throw, whatever was started is stopped again. `extra` manifests
 * (a test's throwaway module) compose after the registered ones, their tables and migrations included.
 */
export async function startServer(config: ServeConfig, log: Logger, extra: readonly ModuleManifest[] = []): Promise<RunningServer> {
  const manifests = composeManifests(extra);
  const build = buildInfo();
  const { engine } = loadUws();
  log.info({ version: build.version, commit: build.commit, node: build.node, fips: build.fips }, 'starting svc serve');
  log.info(
    { engine },
    engine === 'uws-native'
      ? 'http engine: native uWebSockets.js'
      : 'http engine: uws-fallback (slow pure-Node ' + 'engine; the native binary did not load)',
  );
  if (engine !== 'uws-native')
    log.warn({ engine }, 'the native uWebSockets.js binary did not load: ' + 'performance is degraded and TLS is unavailable');
  // Throws when SERVICE_CRYPTO_ENGINE=libsodium and libsodium does not load (a startup failure, exit 1).
  const crypto = ed25519Engine();
  if (crypto.reason === undefined) log.info({ crypto_engine: crypto.name }, 'ed25519 engine: libsodium');
  else log.info({ crypto_engine: crypto.name, reason: crypto.reason }, 'ed25519 engine: OpenSSL (node:crypto)');

  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await chmod(config.dataDir, 0o700);

  let tls: TlsMaterial | undefined;
  if (!config.insecure) {
    tls = await loadOrCreateTls({
      dataDir: config.dataDir,
      certFile: config.tlsCert,
      keyFile: config.tlsKey,
      hosts: [config.listen.host, config.grpcListen.host],
    });
    for (const w of tls.warnings) log.warn({ cert: tls.certPath }, w);
    log.info(
      {
        cert: tls.certPath,
        action: tls.action,
        reason: tls.reason,
        self_signed: tls.selfSigned,
        not_after: tls.notAfter,
        fingerprint_sha256: tls.fingerprintSha256,
        pin_sha256: tls.pinSha256,
        san: tls.subjectAltNames,
      },
      'tls certificate',
    );
  } else {
    log.warn(
      { listen: config.listen, grpc_listen: config.grpcListen },
      'running with --insecure: plaintext HTTP and gRPC ' + 'on loopback only; never use this beyond development',
    );
  }

  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => log.error({ err }, 'error while stopping'));
  };
  try {
    // Held for as long as this server runs: `svc keys rotate` refuses a data directory a server holds.
    const dirLock = holdDataDirShared(config.dataDir);
    stops.push(async () => dirLock.release());
    log.info({ file: dirLock.file }, 'data directory held (svc keys rotate refuses it while this server runs)');
    const store: Store = await openStore(
      {
        backend: config.store,
        dataDir: config.dataDir,
        dsn: config.dsn,
        ...(config.sqliteCacheMib !== undefined ? { sqliteCacheMib: config.sqliteCacheMib } : {}),
      },
      log,
    );
    stops.push(() => store.close());
    const migrated = await store.migrate();
    log.info({ backend: store.backend, applied: migrated.applied, schema_version: migrated.current }, 'store ready');
    // Replicas on one database serve one certificate (docs/scale-out.md); a different one refuses to start.
    const allowTlsChange = tlsRollingChangeFromEnv(process.env);
    const leave = await joinReplicas(store, { dataDir: config.dataDir, fingerprint: tls?.fingerprintSha256, allowTlsChange, log });
    if (leave) stops.push(leave);
    // The durable ledger: keyring in the data dir, signing pool, group-commit pipeline, checkpoint timer.
    const ledger = await LedgerService.open({
      store,
      dataDir: config.dataDir,
      // Verification workers read their seq ranges on their own read-only connections.
      source: exportSourceFor({ backend: config.store, dataDir: config.dataDir, dsn: config.dsn }),
      onError: (err) => log.error({ err }, 'audit checkpoint failed'),
    });
    stops.push(() => ledger.close());
    // One secrets key per deployment: a key that cannot open what the others sealed refuses to start (exit 2),
    // checked after the audit key (exit 5) so a replica missing both is told of the audit key first.
    const sealer = await loadSealer(config.dataDir);
    await checkSecretsKey(store, sealer, { dataDir: config.dataDir, keyFile: process.env['SERVICE_SECRETS_KEY_FILE'] || undefined });
    log.info(
      { key_id: ledger.keyring.active.keyId, algorithm: ledger.keyring.active.algorithm, threads: ledger.pool?.threads ?? 0 },
      'audit ' + 'ledger ready',
    );

    const auditExport = new AuditExporter({
      source: exportSourceFor({ backend: config.store, dataDir: config.dataDir, dsn: config.dsn }),
      version: build.version,
    });
    stops.push(() => auditExport.close());
    const metrics = createMetrics();
    metrics.setEngine(engine);
    metrics.setCryptoEngine(crypto.name);
    let draining = false;
    const grpcState: Services['grpc'] = { listening: false };
    const routes = allRoutes(manifests);
    const events = new EventBus({ catalog: eventCatalog(manifests), log: log.child({ log: 'bus' }), registry: metrics.registry });
    if (config.bus.kind === 'nats') {
      const nats = await (
        await import('../events/nats-binding.js')
      ).NatsBinding.start(events, config.bus.servers, log.child({ log: 'bus' }));
      stops.push(() => nats.close());
    }
    // Identity: cached setup gate, credential cache, lockout, rate limits, policy decision point.
    const identity = new IdentityRuntime({
      store,
      dataDir: config.dataDir,
      routes,
      pdp: await selectPdp(pdpConfigFromEnv(), log),
      rateLimit: rateLimitFromEnv(process.env),
      tokenDefaultTtlMs: config.tokenDefaultTtlMs,
      onRateLimitError: throttledWarn(log, 'shared rate limit unavailable: this replica counts alone until the database answers'),
    });
    // Replicas on one Postgres database empty each other's credential caches (docs/scale-out.md).
    const unlink = await shareInvalidations(identity, store, config.dsn, log);
    if (unlink) stops.push(unlink);
    // WebAuthn relying-party settings (SERVICE_WEBAUTHN_*): a bad RP ID or origin refuses startup, not the first step-up.
    log.info({ webauthn: webauthnSettings() }, 'webauthn relying party');
    const services: Services = {
      build,
      engine: { http: engine, crypto: crypto.name },
      store,
      audit: ledger.sink,
      ledger,
      auditExport,
      dataDir: config.dataDir,
      metrics,
      log,
      startedAt: Date.now(),
      tls: Boolean(tls),
      // Until the first user exists (cached; flipped by POST /v1/setup or --seed-demo).
      setupRequired: () => identity.setupRequired(),
      identity,
      draining: () => draining,
      storeReadiness: cachedReadiness(store),
      grpc: grpcState,
      events,
      sealer,
      hooks: recordHooks(manifests),
      openapi: openapiOf(routes),
      accessEdges: { listEdges: (tenant, filter) => listEdges(store, tenant, filter) },
      config,
      ...(tls
        ? {
            tlsMaterial: {
              certPath: tls.certPath,
              keyPath: tls.keyPath,
              certPem: tls.certPem,
              fingerprintSha256: tls.fingerprintSha256,
              pinSha256: tls.pinSha256,
              selfSigned: tls.selfSigned,
              notAfter: tls.notAfter,
              action: tls.action,
            },
          }
        : {}),
    };
    // Webhook deliveries: lanes per subscription, fed by the durable event log (docs/eventing.md).
    registerBus(store, events);
    const eventing = new EventingRuntime({
      store,
      sealer: services.sealer,
      bus: events,
      log: log.child({ log: 'eventing' }),
      version: build.version,
      rules: () => identity.catalog,
      hooks: services.hooks,
    });
    services.eventing = eventing;
    await eventing.start();
    stops.push(() => eventing.close());
    // Output connectors and the ledger forwarder: lanes on the same delivery engine (docs/connectors.md).
    stops.push(await startConnectors(services));
    await startIdentity(identity, { audit: services.audit, seedDemo: config.seedDemo, print: (text) => process.stdout.write(text), log });
    // The demo estate (agents, graph, workspaces) in the demo tenant; loaded only when asked for.
    if (config.seedDemo) await (await import('./seed-demo.js')).seedDemoEstate(store, services.audit, log);
    // Modules' background work (bus subscribers, sweeps); stopped before the store closes.
    for (const m of manifests) if (m.start) stops.push(m.start(services));
    const authenticate = createAuthenticator();
    const app = new App({
      routes,
      services,
      log,
      tls: Boolean(tls),
      bodyLimit: config.bodyLimit,
      timeoutMs: config.requestTimeoutMs,
      setupRequired: services.setupRequired,
      setupStillRequired: () => identity.loadSetupState(),
      authenticate,
      aroundMutation: publishedAround(auditScopeAround(ledger, log), identity),
    });
    const observer = config.accessLog ? withAccessLog(metrics.http, log) : metrics.http;

    const http: RunningHttp = await listenHttp(app, {
      host: config.listen.host,
      port: config.listen.port,
      tls: tls ? { certFile: tls.certPath, keyFile: tls.keyPath } : undefined,
      observer,
      bodyTimeoutMs: config.bodyTimeoutMs,
    });
    stops.push(() => http.close(config.drainMs));
    const url = `${tls ? 'https' : 'http'}://${formatHostPort(config.listen.host, http.port)}`;
    log.info({ url, port: http.port, engine, tls: Boolean(tls), pin_sha256: tls?.pinSha256 }, 'http listening');

    // ControlPlane runs through the same App (and so the same rules) as REST; Ingest through the same authenticator.
    const clientCaPem = config.grpcClientCa ? await readFile(config.grpcClientCa, 'utf8') : null;
    const grpc: RunningGrpc = await startGrpc({
      host: config.grpcListen.host,
      port: config.grpcListen.port,
      tls: tls ? { certPem: tls.certPem, keyPem: tls.keyPem } : null,
      clientCaPem,
      log,
      app,
      services,
      authenticate,
    });
    stops.push(() => grpc.close());
    grpcState.listening = true;
    grpcState.port = grpc.port;
    log.info(
      {
        address: formatHostPort(config.grpcListen.host, grpc.port),
        port: grpc.port,
        tls: Boolean(tls),
        mtls: Boolean(clientCaPem),
        services: grpc.services,
      },
      'grpc ' + 'listening',
    );

    let stopping: Promise<void> | undefined;
    return {
      httpPort: http.port,
      grpcPort: grpc.port,
      url,
      tls,
      services,
      shutdown: (reason) => {
        stopping ??= (async () => {
          draining = true;
          grpcState.listening = false;
          log.info({ reason, in_flight: http.inFlight() }, 'shutting down: draining in-flight requests');
          await stopAll();
          log.info({ reason }, 'stopped');
        })();
        return stopping;
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** A warning at most once a minute (a failing dependency would otherwise log once per request). */
function throttledWarn(log: Logger, msg: string): (err: unknown) => void {
  let last = 0;
  return (err) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    log.warn({ err }, msg);
  };
}

/** Probes may come every second from several balancers: answer from a 1 s cache. */
function cachedReadiness(store: Store): () => Promise<StoreReadiness> {
  let last: { at: number; value: Promise<StoreReadiness> } | undefined;
  return () => {
    const now = Date.now();
    if (!last || now - last.at > 1000) last = { at: now, value: store.readiness() };
    return last.value;
  };
}

/** Access log: one line per request; never bodies, never the Authorization header (DECISIONS.md). */
function withAccessLog(inner: Services['metrics']['http'], log: Logger): Services['metrics']['http'] {
  const access = log.child({ log: 'access' });
  return {
    started: () => inner.started(),
    finished: (e) => {
      inner.finished(e);
      access.info(
        {
          method: e.method,
          route: e.route,
          status: e.status,
          duration_ms: Math.round(e.durationMs * 100) / 100,
          bytes: e.bytes,
          request_id: e.requestId,
          remote: e.remoteAddress,
          aborted: e.aborted || undefined,
        },
        'request',
      );
    },
  };
}

/** The two contract documents, built on first request and kept (the route table never changes). */
function openapiOf(routes: readonly AnyRoute[]): Services['openapi'] {
  const built = new Map<'stable' | 'beta', unknown>();
  return (which) => {
    if (!built.has(which)) built.set(which, buildOpenApiDocument(which, routes));
    return built.get(which);
  };
}
