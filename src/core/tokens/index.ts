/** API tokens: issue, list, rotate, revoke (rows in the identity tables of the auth area). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { tokensCommands } from './cli.js';
import { tokenRoutes } from './routes.js';
import { tokensEraseText } from './erase-text.js';

export const tokensManifest: ModuleManifest = { name: 'tokens', routes: tokenRoutes, cli: tokensCommands, hooks: [tokensEraseText] };
