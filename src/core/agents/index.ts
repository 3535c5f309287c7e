/** Agents of a tenant: routes, the tenants and agents tables, and the core event types (src/events/core-events.ts). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { agentsCommands } from './cli.js';
import { agentRoutes } from './routes.js';
import { agentsStorage } from './storage.js';
import { agentsEraseText } from './erase-text.js';
import { coreEvents } from '../../events/core-events.js';

export const agentsManifest: ModuleManifest = {
  name: 'agents',
  hooks: [agentsEraseText],
  routes: agentRoutes,
  storage: agentsStorage,
  cli: agentsCommands,
  // Declared together (agent, workspace, token, user, edge): the catalog lists them first, as before.
  events: coreEvents,
};
