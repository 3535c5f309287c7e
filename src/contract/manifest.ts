/**
 * A module's manifest: what one namespace (or core area) adds to the server. `src/routes.ts` lists the
 * manifests, one line each, and the registries (route table, event catalog) fold them together, so a
 * new namespace is one folder whose `index.ts` exports its manifest plus one line there.
 */
import type { AnyRoute } from './route.js';
import type { EventTypeDecl } from '../events/event-types.js';
import type { RecordHookDecl } from './record-hooks.js';
import type { Services } from '../serve/services.js';

export interface ModuleManifest {
  /** the namespace (`accessmap`, `security`…) or core area (`agents`, `identity`…) */
  name: string;
  routes: readonly AnyRoute[];
  /** event types this module emits on the bus */
  events?: readonly EventTypeDecl[];
  /** guards and cascades on other modules' records (src/contract/record-hooks.ts) */
  hooks?: readonly RecordHookDecl[];
  /** background work (bus subscriptions, timers) started once the server's services exist; returns its stop */
  start?: (services: Services) => () => Promise<void>;
}
