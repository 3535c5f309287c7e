/**
 * The claude-policy module: managed agent settings (managed-settings, hooks, managed-mcp, sandbox) as signed revisions, their artifacts and
 * the hosts' check-ins.
 */
import type { ModuleManifest } from '../../contract/manifest.js';
import { claudePolicyCommands } from './cli.js';
import { claudePolicyEvents } from './events.js';
import { claudePolicyRoutes } from './routes.js';
import { claudePolicyStorage } from './storage.js';
import { claudePolicyEraseText } from './erase-text.js';

export const claudePolicyManifest: ModuleManifest = {
  name: 'claude-policy',
  hooks: [claudePolicyEraseText],
  routes: claudePolicyRoutes,
  storage: claudePolicyStorage,
  cli: claudePolicyCommands,
  events: claudePolicyEvents,
};
