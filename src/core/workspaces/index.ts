/** Workspaces of a tenant (their table is created by the access map's migration 5). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { workspacesCommands } from './cli.js';
import { workspaceRoutes } from './routes.js';

export const workspacesManifest: ModuleManifest = { name: 'workspaces', routes: workspaceRoutes, cli: workspacesCommands };
