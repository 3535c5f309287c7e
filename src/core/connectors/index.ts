/** Output connectors and the ledger forwarder (docs/connectors.md): routes, and the runtime the composition root starts. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { connectorsCommands } from './cli.js';
import type { Services } from '../../serve/services.js';
import { connectorRoutes } from './routes.js';
import { sourcesRoutes } from './sources-routes.js';
import { ConnectorRuntime } from './runtime.js';
import { metricsSource } from './health.js';
import { connectorsStorage } from './storage.js';

export const connectorsManifest: ModuleManifest = {
  name: 'connectors',
  routes: [...connectorRoutes, ...sourcesRoutes],
  storage: connectorsStorage,
  cli: connectorsCommands,
};

/** Starts the connector runtime on `services.connectors`; returns its stop. */
export async function startConnectors(s: Services): Promise<() => Promise<void>> {
  const runtime = new ConnectorRuntime({
    store: s.store,
    sealer: s.sealer,
    bus: s.events,
    log: s.log.child({ log: 'connectors' }),
    version: s.build.version,
    dataDir: s.dataDir,
    registry: s.metrics.registry,
  });
  runtime.metrics?.setSource(() => metricsSource(s.store, runtime));
  s.connectors = runtime;
  await runtime.start();
  return () => runtime.close();
}

export { connectorHealth, type HealthReport } from './health.js';
export type { ConnectorRuntime } from './runtime.js';
