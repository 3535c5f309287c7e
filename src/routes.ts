/** Every area the server serves: one manifest per line (src/contract/manifest.ts), in route-table order. */
import type { AnyRoute } from './contract/route.js';
import type { ModuleManifest } from './contract/manifest.js';
import { EventCatalog } from './events/event-types.js';
import { RecordHooks } from './contract/record-hooks.js';
import { storage } from './storage.js';
import { healthManifest } from './core/health/index.js';
import { setupManifest } from './core/setup/index.js';
import { authManifest } from './core/auth/index.js';
import { tokensManifest } from './core/tokens/index.js';
import { usersManifest } from './core/users/index.js';
import { systemManifest } from './core/system/index.js';
import { auditExportManifest } from './core/audit-export/index.js';
import { auditManifest } from './core/audit/index.js';
import { webauthnManifest } from './core/webauthn/index.js';
import { agentsManifest } from './core/agents/index.js';
import { accessEdgesManifest } from './core/access-edges/index.js';
import { workspacesManifest } from './core/workspaces/index.js';
import { searchManifest } from './core/search/index.js';
import { accessmapManifest } from './modules/accessmap/index.js';
import { webConsoleManifest } from './core/web-console/index.js';
import { governanceManifest } from './modules/governance/index.js';
import { securityManifest } from './modules/security/index.js';
import { observabilityManifest } from './modules/observability/index.js';
import { eventingManifest } from './modules/eventing/index.js';
import { consoleManifest } from './core/console/index.js';
import { connectorsManifest } from './core/connectors/index.js';
import { complianceManifest } from './modules/compliance/index.js';
import { claudePolicyManifest } from './modules/claude-policy/index.js';
import { capabilitiesManifest } from './modules/capabilities/index.js';

/** The manifests, in registration order (the router tries routes in this order). */
export function allManifests(): ModuleManifest[] {
  return [
    healthManifest,
    setupManifest,
    authManifest,
    tokensManifest,
    usersManifest,
    systemManifest,
    auditExportManifest,
    auditManifest,
    webauthnManifest,
    agentsManifest,
    accessEdgesManifest,
    workspacesManifest,
    searchManifest,
    accessmapManifest,
    webConsoleManifest,
    governanceManifest,
    securityManifest,
    observabilityManifest,
    eventingManifest,
    consoleManifest,
    connectorsManifest,
    complianceManifest,
    claudePolicyManifest,
    capabilitiesManifest,
  ];
}

/**
 * The manifests a server composes: the registered ones, then `extra` (a test's throwaway module).
 * The extras' storage joins the store's fold here, before the store opens; every manifest's storage
 * must be in that fold, its consumed event types in the catalog, its name unique.
 */
export function composeManifests(extra: readonly ModuleManifest[] = []): ModuleManifest[] {
  const manifests = [...allManifests(), ...extra];
  storage.register(extra.flatMap((m) => (m.storage ? [m.storage] : [])));
  checkManifests(manifests);
  return manifests;
}

/** Throws naming every manifest that would compose wrongly. */
export function checkManifests(manifests: readonly ModuleManifest[]): void {
  const problems: string[] = [];
  const names = new Set<string>();
  const catalog = eventCatalog(manifests);
  for (const m of manifests) {
    if (names.has(m.name)) problems.push(`manifest ${m.name} is listed twice`);
    names.add(m.name);
    if (m.storage && !storage.areas.includes(m.storage)) problems.push(`manifest ${m.name}: its storage is not listed in src/storage.ts`);
    if (m.storage && m.storage.name !== m.name) problems.push(`manifest ${m.name}: its storage is named ${m.storage.name}`);
    for (const t of m.consumes ?? []) if (!catalog.get(t)) problems.push(`manifest ${m.name} consumes ${t}, which no manifest declares`);
  }
  if (problems.length > 0) throw new Error(`module manifests refused: ${problems.join('; ')}`);
}

/** The whole route table, in registration order. */
export function allRoutes(manifests: readonly ModuleManifest[] = allManifests()): AnyRoute[] {
  return manifests.flatMap((m) => m.routes);
}

/** Every event type the manifests declare. */
export function eventCatalog(manifests: readonly ModuleManifest[] = allManifests()): EventCatalog {
  return new EventCatalog(manifests.flatMap((m) => m.events ?? []));
}

/** Every guard and cascade the manifests register. */
export function recordHooks(manifests: readonly ModuleManifest[] = allManifests()): RecordHooks {
  return new RecordHooks(manifests.flatMap((m) => m.hooks ?? []));
}
