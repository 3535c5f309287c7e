/** The `observability` module: read-only answers about ingestion, traces and the build; owns no stored entities. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { observabilityCommands } from './cli.js';
import { observabilityRoutes } from './routes.js';

export const observabilityManifest: ModuleManifest = { name: 'observability', routes: observabilityRoutes, cli: observabilityCommands };
