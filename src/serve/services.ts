/** The service container handlers reach through `ctx.services`; built once by the composition root. */
import type { Logger } from 'pino';
import type { BuildInfo } from '../build-info.js';
import type { AuditSink } from '../ledger/audit-sink.js';
import type { LedgerService } from '../ledger/ledger-service.js';
import type { AuditExporter } from '../core/audit-export/exporter.js';
import type { HttpEngine } from '../http/engine.js';
import type { Ed25519EngineName } from '../ledger/ed25519-engine.js';
import type { Store, StoreReadiness } from '../store/store-types.js';
import type { Metrics } from './metrics.js';
import type { IdentityRuntime } from '../auth/runtime.js';
import type { EventBus } from '../events/bus.js';
import type { Sealer } from '../secrets/sealing.js';
import type { RecordHooks } from '../contract/record-hooks.js';
import type { AccessEdgeReader } from '../core/access-edges/schemas.js';
import type { EventingRuntime } from '../modules/eventing/runtime.js';
import type { ConnectorRuntime } from '../core/connectors/runtime.js';
import type { ServeConfig } from './config.js';
import type { TlsMaterial } from './tls.js';

export interface Services {
  build: BuildInfo;
  /** HTTP engine, and the Ed25519 engine the ledger signs and verifies with */
  engine: { http: HttpEngine; crypto: Ed25519EngineName };
  store: Store;
  /** the ledger's append seam: every mutation and privileged read goes through it */
  audit: AuditSink;
  /** the durable ledger (reads, verify, keys, checkpoints); absent: the audit routes answer 501 */
  ledger?: LedgerService;
  /** streaming audit export (its worker pool starts on first use); absent: the export answers 501 */
  auditExport?: AuditExporter;
  /** the server's data directory (keys, certificates, SQLite file) */
  dataDir: string;
  metrics: Metrics;
  log: Logger;
  startedAt: number;
  tls: boolean;
  /** true until the first user exists (DECISIONS.md setup gate) */
  setupRequired(): boolean;
  /** true once shutdown began: /pod-readyz turns 503 so load balancers move away */
  draining(): boolean;
  /** store readiness, cached briefly so probes cannot hammer the database */
  storeReadiness(): Promise<StoreReadiness>;
  /** gRPC listener state for /status */
  grpc: { listening: boolean; port?: number };
  /** the in-process event bus: modules publish after their change commits (src/events/bus.ts) */
  events: EventBus;
  /** seals secrets at rest (AES-256-GCM; src/secrets/sealing.ts) */
  sealer: Sealer;
  /** guards and cascades modules register on each other's records (src/contract/record-hooks.ts) */
  hooks: RecordHooks;
  /** the access graph's edges for the core `/v1/access-edges` (the access map module provides it) */
  accessEdges: AccessEdgeReader;
  /** the OpenAPI documents of this server's route table, built once */
  openapi(which: 'stable' | 'beta'): unknown;
  /** webhook subscriptions and their delivery engine (src/modules/eventing); absent: its routes answer 501 */
  eventing?: EventingRuntime;
  /** output connectors and the ledger forwarder on the delivery engine (src/core/connectors); absent: health says stopped */
  connectors?: ConnectorRuntime;
  /** identity state: setup, credential cache, lockout, rate limits, PDP (src/auth/runtime.ts) */
  identity?: IdentityRuntime;
  /** the resolved configuration (console: effective config, support bundle) */
  config?: ServeConfig;
  /** the served certificate (console: key custody, setup status, health summary); absent with --insecure */
  tlsMaterial?: Pick<
    TlsMaterial,
    'certPath' | 'keyPath' | 'certPem' | 'fingerprintSha256' | 'pinSha256' | 'selfSigned' | 'notAfter' | 'action'
  >;
}
