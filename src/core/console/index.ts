/** The console API: status, license, secrets, SSO, support bundle, and the console tables. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { consoleCommands } from './cli.js';
import { consoleRoutes } from './routes.js';
import { consoleStorage } from './storage.js';

export const consoleManifest: ModuleManifest = { name: 'console', routes: consoleRoutes, storage: consoleStorage, cli: consoleCommands };
