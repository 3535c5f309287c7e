/** The `security` module: stored findings, their SARIF export, and svc's own detectors. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { securityCommands } from './cli.js';
import { securityEvents } from './events.js';
import { securityRoutes } from './routes.js';
import { startSecurity } from './runner.js';
import { securityStorage } from './storage.js';
import { securityEraseText } from './erase-text.js';

export const securityManifest: ModuleManifest = {
  name: 'security',
  hooks: [securityEraseText],
  routes: securityRoutes,
  storage: securityStorage,
  cli: securityCommands,
  events: securityEvents,
  // The detectors re-run when the graph or the agents change (runner.ts).
  consumes: ['edge.observed', 'agent.created', 'agent.deleted'],
  start: startSecurity,
};
