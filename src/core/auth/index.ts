/** Sign-in, sessions and the identity tables (users, memberships, sessions, tokens, the setup claim). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { authCommands } from './cli.js';
import { authRoutes } from './routes.js';
import { authStorage } from './storage.js';

export const authManifest: ModuleManifest = { name: 'auth', routes: authRoutes, storage: authStorage, cli: authCommands };
