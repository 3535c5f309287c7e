/** Organizations (tenants) and their members, and the state replicas share (keyring, limits, replica registry). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { systemCommands } from './cli.js';
import { memberRoutes } from './member-routes.js';
import { orgRoutes } from './org-routes.js';
import { systemStorage } from './storage.js';

export const systemManifest: ModuleManifest = {
  name: 'system',
  routes: [...memberRoutes, ...orgRoutes],
  storage: systemStorage,
  cli: systemCommands,
};
