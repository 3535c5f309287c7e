/** First-run setup: the claim that creates the first administrator (its tables are the identity tables of the auth area). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { setupCommands } from './cli.js';
import { setupRoutes } from './routes.js';

export const setupManifest: ModuleManifest = { name: 'setup', routes: setupRoutes, cli: setupCommands };
