/** Every area the server serves: one manifest per line (src/contract/manifest.ts). */
import type { AnyRoute } from './contract/route.js';
import type { ModuleManifest } from './contract/manifest.js';
import { EventCatalog } from './events/event-types.js';
import { RecordHooks } from './contract/record-hooks.js';
import { accessmapManifest } from './modules/accessmap/index.js';
import { healthRoutes } from './core/health/routes.js';
import { identityRoutes } from './core/auth/identity-routes.js';
import { auditExportRoutes } from './core/audit-export/routes.js';
import { auditRoutes } from './core/audit/routes.js';
import { webauthnRoutes } from './core/webauthn/routes.js';
import { stepUpUiRoutes } from './core/webauthn/ui-routes.js';
import { browserSessionRoutes } from './core/auth/browser-routes.js';
import { consoleUiRoutes } from './core/web-console/routes.js';
import { governanceManifest } from './modules/governance/index.js';
import { securityManifest } from './modules/security/index.js';
import { observabilityManifest } from './modules/observability/index.js';
import { eventingManifest } from './modules/eventing/index.js';
import { consoleRoutes } from './core/console/routes.js';
import { connectorsManifest } from './core/connectors/index.js';
import { complianceManifest } from './modules/compliance/index.js';
import { claudePolicyManifest } from './modules/claude-policy/index.js';
import { capabilitiesManifest } from './modules/capabilities/index.js';

/** The manifests, in registration order. */
export function allManifests(): ModuleManifest[] {
  return [
    { name: 'health', routes: healthRoutes },
    { name: 'identity', routes: identityRoutes },
    { name: 'audit-export', routes: auditExportRoutes },
    { name: 'audit', routes: auditRoutes },
    { name: 'webauthn', routes: [...webauthnRoutes, ...stepUpUiRoutes] },
    accessmapManifest,
    // The web console: browser sign-in (cookie + CSRF) and its pages and assets (docs/web.md).
    { name: 'web-console', routes: [...browserSessionRoutes, ...consoleUiRoutes] },
    governanceManifest,
    securityManifest,
    observabilityManifest,
    eventingManifest,
    { name: 'console', routes: consoleRoutes },
    connectorsManifest,
    complianceManifest,
    claudePolicyManifest,
    capabilitiesManifest,
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

/** Every guard and cascade the manifests register. */
export function recordHooks(): RecordHooks {
  return new RecordHooks(allManifests().flatMap((m) => m.hooks ?? []));
}
