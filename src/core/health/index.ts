/** Liveness, readiness and metrics: routes only, no tables. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { healthCommands } from './cli.js';
import { healthRoutes } from './routes.js';

export const healthManifest: ModuleManifest = { name: 'health', routes: healthRoutes, cli: healthCommands };
