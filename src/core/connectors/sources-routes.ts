/** `GET|PUT|DELETE /v1/console/sources`: the collector source roster (stable; `system:admin`; mutations audited). */
import Type from 'typebox';
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import type { Principal } from '../../auth/principal.js';
import { NameQuery, SourceIn, SourceOut, SourcesQuery } from './schemas.js';
import { deleteSource, listSources, putSource } from './sources-store.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export const sourcesRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/sources',
    operationId: 'listSources',
    summary: 'The collector source roster: name, kind, tenant, enabled, poll interval, config, last seen, counts',
    query: SourcesQuery,
    response: Type.Object({ items: Type.Array(SourceOut) }, { additionalProperties: false }),
    handler: async (ctx) => ({ items: await listSources(ctx.services.store, ctx.query.tenant) }),
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/console/sources',
    operationId: 'putSource',
    summary: 'Create or replace a collector source by name',
    audit: 'source.put',
    auditChain: 'system',
    body: SourceIn,
    response: SourceOut,
    bodyLimit: 32 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const { view, created } = await putSource(ctx.services.store, ctx.body);
      await ctx.audit(
        { kind: 'source', id: view.name },
        {
          created,
          kind: view.kind,
          tenant: view.tenant,
          enabled: view.enabled,
          version: view.version,
        },
      );
      return view;
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/console/sources',
    operationId: 'deleteSource',
    summary: 'Remove a collector source from the roster',
    audit: 'source.delete',
    auditChain: 'system',
    query: NameQuery,
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const gone = await deleteSource(ctx.services.store, ctx.query.name);
      if (!gone) throw errors.notFound('source');
      await ctx.audit({ kind: 'source', id: gone.name }, { kind: gone.kind, tenant: gone.tenant });
      return reply.empty(204);
    },
  }),
];
