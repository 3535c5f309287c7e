/** TEMPLATE: routes under `/v1/m/tmpl/`, permissions `tmpl:<resource>:<verb>`, stability `beta`; every mutation names its audit action. */
import { route, type AnyRoute } from '../../contract/route.js';
import { tenantOf } from '../../http/request-scope.js';
import { reply } from '../../http/reply.js';
import { Item, ItemBody, ItemList } from './schemas.js';
import { createItem, listItems } from './tmpl-service.js';

const common = { stability: 'beta' as const, tags: ['tmpl'] };

export const tmplRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/tmpl/items',
    operationId: 'tmplCreateItem',
    summary: 'Create an item',
    permission: 'tmpl:item:write',
    audit: 'tmpl.item.create',
    body: ItemBody,
    response: Item,
    status: 201,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const item = await ctx.services.events.withEvents((emit) => createItem(ctx.services.store, tenant, ctx.body.name, emit));
      // The action comes from the declaration above (`audit: 'tmpl.item.create'`).
      await ctx.audit({ kind: 'tmpl_item', id: item.id }, { name: item.name });
      return reply.json(item, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/tmpl/items',
    operationId: 'tmplListItems',
    summary: "The tenant's items",
    permission: 'tmpl:item:read',
    response: ItemList,
    handler: async (ctx) => ({ items: await listItems(ctx.services.store, tenantOf(ctx)) }),
  }),
];
