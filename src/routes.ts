/** Every route the server serves: one line per area (ARCHITECTURE.md: a namespace is a folder that exports its routes). */
import type { AnyRoute } from './contract/route.js';
import { healthRoutes } from './core/health/routes.js';
import { identityRoutes } from './core/auth/identity-routes.js';
import { auditExportRoutes } from './core/audit-export/routes.js';
import { auditRoutes } from './core/audit/routes.js';
import { webauthnRoutes } from './core/webauthn/routes.js';
import { stepUpUiRoutes } from './core/webauthn/ui-routes.js';
import { accessmapAreaRoutes } from './modules/accessmap/area-routes.js';

/** The whole route table, in registration order. */
export function allRoutes(): AnyRoute[] {
  return [...healthRoutes, ...identityRoutes, ...auditExportRoutes, ...auditRoutes, ...webauthnRoutes, ...stepUpUiRoutes, ...accessmapAreaRoutes];
}
