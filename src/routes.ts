/** Every area the server serves: one manifest per line (src/contract/manifest.ts). */
import type { AnyRoute } from './contract/route.js';
import type { ModuleManifest } from './contract/manifest.js';
import { EventCatalog } from './events/event-types.js';
import { healthRoutes } from './core/health/routes.js';
import { identityRoutes } from './core/auth/identity-routes.js';
import { auditExportRoutes } from './core/audit-export/routes.js';
import { auditRoutes } from './core/audit/routes.js';
import { webauthnRoutes } from './core/webauthn/routes.js';
import { stepUpUiRoutes } from './core/webauthn/ui-routes.js';
import { accessmapAreaRoutes } from './modules/accessmap/area-routes.js';
import { coreEvents } from './events/core-events.js';
import { consoleRoutes } from './core/console/routes.js';

/** The manifests, in registration order. */
export function allManifests(): ModuleManifest[] {
  return [
    { name: 'health', routes: healthRoutes },
    { name: 'identity', routes: identityRoutes },
    { name: 'audit-export', routes: auditExportRoutes },
    { name: 'audit', routes: auditRoutes },
    { name: 'webauthn', routes: [...webauthnRoutes, ...stepUpUiRoutes] },
    { name: 'accessmap', routes: accessmapAreaRoutes, events: coreEvents },
    { name: 'console', routes: consoleRoutes },
  ];
}

/** The whole route table, in registration order. */
export function allRoutes(): AnyRoute[] {
  return allManifests().flatMap((m) => m.routes);
}

/** Every event type the manifests declare. */
export function eventCatalog(): EventCatalog {
  return new EventCatalog(allManifests().flatMap((m) => m.events ?? []));
}
