/** Search across a tenant's agents and workspaces. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { searchCommands } from './cli.js';
import { searchRoutes } from './routes.js';

export const searchManifest: ModuleManifest = { name: 'search', routes: searchRoutes, cli: searchCommands };
