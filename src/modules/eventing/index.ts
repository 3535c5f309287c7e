/** The eventing module's manifest: its routes, the console bus route, and the event types it emits. */
import Type from 'typebox';
import type { ModuleManifest } from '../../contract/manifest.js';
import { eventingCommands } from './cli.js';
import { consoleBusRoutes } from './console-route.js';
import { egressRoutes } from './egress-routes.js';
import { eventingRoutes } from './routes.js';
import { eventingStorage } from './storage.js';
import { eventingEraseText } from './erase-text.js';

export const eventingManifest: ModuleManifest = {
  name: 'eventing',
  hooks: [eventingEraseText],
  routes: [...eventingRoutes, ...egressRoutes, ...consoleBusRoutes],
  storage: eventingStorage,
  cli: eventingCommands,
  events: [
    {
      type: 'subscription.tested',
      source: '/svc/eventing',
      permission: 'eventing:subscription:read',
      description: 'A test delivery of one subscription (sent only to it, by POST …/subscriptions/{id}/test; never logged).',
      stability: 'beta',
      schema: Type.Object({ subscription_id: Type.String(), message: Type.String() }),
      // Sent to one subscription by its test route, never logged: no subscription can ask for it.
      durable: false,
    },
  ],
};

export { checkEgress, normalizeAllowEntry, readEgressPolicy, verifyFence, type EgressPolicy, type EgressVerdict } from './egress.js';
