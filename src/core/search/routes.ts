/** `GET /v1/search` (spec Endpoints → system): search across the kinds the caller may read. */
import Type from 'typebox';
import { Limit, Text, Uuid } from '../../contract/common.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { grantIn } from '../../auth/principal.js';
import { permissionRule, roleAtLeast } from '../../auth/roles.js';
import type { RequestContext } from '../../http/context.js';
import { tenantOf } from '../../http/request-scope.js';
import { search } from './search-service.js';

const Kind = Type.Enum(['agent', 'workspace', 'session', 'identity', 'resource']);
const Answer = Type.Object(
  {
    items: Type.Array(Type.Object({ kind: Kind, id: Uuid, name: Type.String(), detail: Type.String() }, { additionalProperties: false })),
    has_more: Type.Boolean(),
    kinds: Type.Array(Kind, { description: 'the kinds this caller was searched across' }),
  },
  { additionalProperties: false },
);
const Query = Type.Object({ q: Text({ minLength: 1, maxLength: 200 }), limit: Type.Optional(Limit) }, { additionalProperties: false });

/** Graph nodes are a privileged read (DECISIONS.md): only callers who may read the graph see them. */
function mayReadGraph(ctx: Pick<RequestContext, 'principal'>, tenant: string): boolean {
  const p = ctx.principal;
  if (!p) return false;
  const min = permissionRule('accessmap:graph:read', true).minRole ?? 'owner';
  const grant = grantIn(p, tenant);
  return grant !== undefined && roleAtLeast(grant.role, min);
}

export const searchRoutes: AnyRoute[] = [
  route({
    stability: 'stable',
    tags: ['system'],
    method: 'GET',
    path: '/v1/search',
    operationId: 'search',
    summary: 'Search agents, workspaces and (for editors and above) graph nodes by name or key',
    permission: 'search:read',
    // Recorded only when the answer holds graph nodes (a privileged read then).
    audit: 'search.read',
    query: Query,
    response: Answer,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const graph = mayReadGraph(ctx, tenant);
      const out = await search(ctx.services.store, tenant, ctx.query.q, { limit: ctx.query.limit ?? 50, graph });
      // Graph nodes in the answer make it a privileged read, audited like the graph itself.
      if (graph) await ctx.audit({ kind: 'search', id: '' }, { kinds: out.kinds, returned: out.items.length });
      return out;
    },
  }),
];
