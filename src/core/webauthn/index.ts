/** WebAuthn step-up: the ceremony routes, the step-up page, and the credential tables. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { webauthnRoutes } from './routes.js';
import { stepUpUiRoutes } from './ui-routes.js';
import { webauthnStorage } from './storage.js';
import { webauthnEraseText } from './erase-text.js';

export const webauthnManifest: ModuleManifest = {
  name: 'webauthn',
  hooks: [webauthnEraseText],
  routes: [...webauthnRoutes, ...stepUpUiRoutes],
  storage: webauthnStorage,
};
