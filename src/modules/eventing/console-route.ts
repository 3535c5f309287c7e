/**
 * `GET /v1/console/bus` (core, superadmin): the bus binding, subscribers per event type, queue depths and drops, and the delivery lanes.
 */
import { route, type AnyRoute } from '../../contract/route.js';
import { SYSTEM_ADMIN } from '../../auth/roles.js';
import { queueDepth } from '../../events/delivery/delivery-store.js';
import { BusAnswer } from './schemas.js';

export const consoleBusRoutes: AnyRoute[] = [
  route({
    stability: 'stable',
    tags: ['console'],
    method: 'GET',
    path: '/v1/console/bus',
    operationId: 'consoleBus',
    summary: 'The event bus: binding, subscribers per type, queue depths, drops, delivery lanes',
    permission: SYSTEM_ADMIN,
    response: BusAnswer,
    handler: async (ctx) => {
      const bus = ctx.services.events;
      const stats = bus.stats();
      const types = bus.catalog
        .list()
        .map((d) => ({
          type: d.type,
          subscribers: stats.subscribers.filter((s) => s.types === '*' || s.types.includes(d.type)).map((s) => s.name),
        }));
      const lanes = ctx.services.eventing?.engine.stats() ?? [];
      const depth = new Map<string, number>();
      for (const tenant of new Set(lanes.map((l) => l.tenant))) {
        for (const [id, n] of await ctx.services.store.withTenant(tenant, (tx) => queueDepth(tx, tenant))) depth.set(id, n);
      }
      return {
        binding: bus.binding(),
        published: stats.published,
        types,
        subscribers: stats.subscribers.map((s) => ({ ...s, types: s.types === '*' ? ('*' as const) : [...s.types] })),
        drops: stats.subscribers.reduce((n, s) => n + s.dropped, 0),
        lanes: lanes.map((l) => ({ ...l, queued: depth.get(l.id) ?? 0 })),
      };
    },
  }),
];
