/** Users of the deployment (rows in the identity tables of the auth area). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { usersCommands } from './cli.js';
import { userRoutes } from './routes.js';

export const usersManifest: ModuleManifest = { name: 'users', routes: userRoutes, cli: usersCommands };
