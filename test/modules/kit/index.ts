/**
 * A throwaway module made from src/modules/_template the way a new namespace is: one route file, one
 * table on both backends, one CLI command, one event type. It is registered nowhere in src/: the
 * test composes it into a real server (svc-kit.ts), which is the point of the kit.
 */
import Type from 'typebox';
import type { ModuleManifest } from '../../../src/contract/manifest.js';
import { kitCommands } from './cli.js';
import { kitRoutes } from './routes.js';
import { kitStorage } from './storage.js';

export const kitManifest: ModuleManifest = {
  name: 'kit',
  routes: kitRoutes,
  storage: kitStorage,
  cli: kitCommands,
  events: [
    {
      type: 'kit.note_added',
      source: '/svc/kit',
      description: 'A note was added.',
      permission: 'kit:note:read',
      stability: 'beta',
      schema: Type.Object({ id: Type.String() }),
    },
  ],
};
