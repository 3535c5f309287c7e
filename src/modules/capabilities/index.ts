/** The capabilities module: MCP server and tool configurations with secret references, every change a revision. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { capabilitiesCommands } from './cli.js';
import { capabilitiesEvents } from './events.js';
import { capabilitiesRoutes } from './routes.js';

export const capabilitiesManifest: ModuleManifest = {
  name: 'capabilities',
  routes: capabilitiesRoutes,
  cli: capabilitiesCommands,
  events: capabilitiesEvents,
};

/** What other modules may use: a configuration with its references resolved now (throws SecretUnavailableError when one is gone). */
export { resolveConfig, type CapabilityConfig, type ConfigDocument } from './capabilities-service.js';
