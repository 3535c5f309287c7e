/** The compliance module: legal holds (a veto on deletes and erasures) and erasure requests, both under dual control. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { complianceCommands } from './cli.js';
import { complianceEvents } from './events.js';
import { complianceHooks } from './hooks.js';
import { complianceEraseText } from './erase-text.js';
import { complianceRoutes } from './routes.js';
import { complianceStorage } from './storage.js';

export const complianceManifest: ModuleManifest = {
  name: 'compliance',
  routes: complianceRoutes,
  storage: complianceStorage,
  cli: complianceCommands,
  events: complianceEvents,
  hooks: [...complianceHooks, complianceEraseText],
};
