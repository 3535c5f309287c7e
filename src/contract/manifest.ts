/**
 * A module's manifest: what one namespace (or core area) adds to the server. `src/routes.ts` lists the
 * manifests, one line each, and the registries fold them together: the route table, the event
 * catalog, the record hooks, and (through the light `storage` part, also listed in src/storage.ts)
 * the migrations of both backends and the Postgres grants. docs/modules.md walks through a new one.
 */
import type { CommandClass } from 'clipanion';
import type { AnyRoute } from './route.js';
import type { EventTypeDecl } from '../events/event-types.js';
import type { RecordHookDecl } from './record-hooks.js';
import type { Services } from '../serve/services.js';
import type { ModuleStorage } from '../store/module-storage.js';

export interface ModuleManifest {
  /** the namespace (`accessmap`, `security`…) or core area (`agents`, `identity`…) */
  name: string;
  routes: readonly AnyRoute[];
  /** its tables (tenant or global, grants, RLS) and migrations on both backends (src/store/module-storage.ts) */
  storage?: ModuleStorage;
  /** its `svc` commands, from a light `cli.ts` the CLI index lists too (the CLI never loads route code) */
  cli?: readonly CommandClass[];
  /** event types this module emits on the bus */
  events?: readonly EventTypeDecl[];
  /** event types (of any module) this module subscribes to; each must be in the catalog */
  consumes?: readonly string[];
  /** guards and cascades on other modules' records (src/contract/record-hooks.ts) */
  hooks?: readonly RecordHookDecl[];
  /** background work (bus subscriptions, timers) started once the server's services exist; returns its stop */
  start?: (services: Services) => () => Promise<void>;
}
