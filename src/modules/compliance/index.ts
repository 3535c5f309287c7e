/** The compliance module: legal holds (a veto on deletes and erasures) and erasure requests, both under dual control. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { complianceEvents } from './events.js';
import { complianceHooks } from './hooks.js';
import { complianceRoutes } from './routes.js';

export const complianceManifest: ModuleManifest = {
  name: 'compliance',
  routes: complianceRoutes,
  events: complianceEvents,
  hooks: complianceHooks,
};
