/**
 * TEMPLATE: the module's manifest, the only file other code imports. To add a namespace: copy this
 * folder to src/modules/<ns>/, rename `tmpl`, then add one line each to src/routes.ts (the manifest),
 * src/storage.ts (its storage, if it has tables) and src/cli/commands/index.ts (its commands).
 * test/modules/kit/ is such a copy, composed into a real server by its test.
 */
import type { ModuleManifest } from '../../contract/manifest.js';
import { tmplCommands } from './cli.js';
import { tmplEvents } from './events.js';
import { tmplRoutes } from './routes.js';
import { tmplStorage } from './storage.js';

export const tmplManifest: ModuleManifest = {
  name: 'tmpl',
  routes: tmplRoutes,
  storage: tmplStorage,
  cli: tmplCommands,
  events: tmplEvents,
  // consumes: ['agent.deleted'], with a subscription in `start`; hooks: guards and cascades on others' records.
};

// The service surface other modules may call (never the tables).
export { listItems, type Item } from './tmpl-service.js';
