/** Every route of the console area, for the one line in src/routes.ts. */
import type { AnyRoute } from '../../contract/route.js';
import { statusRoutes } from './status-routes.js';
import { secretsRoutes } from './secrets-routes.js';
import { licenseRoutes } from './license-routes.js';
import { bundleRoutes } from './bundle-routes.js';
import { ssoConfigRoutes } from './sso-routes.js';
import { ssoLoginRoutes } from './sso-login-routes.js';
import { ssoIdentityRoutes } from './sso-identity-routes.js';
import './sso-settings.js';

export const consoleRoutes: AnyRoute[] = [
  ...statusRoutes,
  ...secretsRoutes,
  ...licenseRoutes,
  ...bundleRoutes,
  ...ssoConfigRoutes,
  ...ssoLoginRoutes,
  ...ssoIdentityRoutes,
];
