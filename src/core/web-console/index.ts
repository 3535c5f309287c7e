/** The web console: browser sign-in (cookie + CSRF) and its pages and assets (docs/web.md). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { browserSessionRoutes } from '../auth/browser-routes.js';
import { consoleUiRoutes } from './routes.js';

export const webConsoleManifest: ModuleManifest = { name: 'web-console', routes: [...browserSessionRoutes, ...consoleUiRoutes] };
