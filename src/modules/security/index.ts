/** The `security` module: stored findings, their SARIF export, and svc's own detectors. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { securityEvents } from './events.js';
import { securityRoutes } from './routes.js';
import { startSecurity } from './runner.js';

export const securityManifest: ModuleManifest = { name: 'security', routes: securityRoutes, events: securityEvents, start: startSecurity };
