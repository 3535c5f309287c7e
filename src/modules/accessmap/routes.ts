/**
 * Module routes `/v1/m/accessmap/*` (beta). Reads are privileged (editor and above, never viewer;
 * DECISIONS.md): the authenticator appends their ledger record from the route's `audit` before the
 * handler runs (src/auth/authenticator.ts), so handlers here do not. Writes append their own record.
 */
import { route, type AnyRoute } from '../../contract/route.js';
import type { RequestContext } from '../../http/context.js';
import { errors } from '../../contract/errors.js';
import { tenantOf } from '../../http/request-scope.js';
import { DEFAULT_BOUNDS, escalation, exfil, reachability, type SearchBounds } from './attack-paths.js';
import { ingestObservations, revokeGrants, upsertGrants } from './edge-store.js';
import { listDrift, listEdges } from './edge-query.js';
import { withFoldedGraph } from './graph-source.js';
import { ENGINE_DEFAULT_LIMIT } from './model.js';
import { neighbors } from './neighbors.js';
import { writeNodes } from './node-store.js';
import {
  AgentPathQuery,
  DriftPage,
  DriftQuery,
  EdgePage,
  EscalationAnswer,
  ExfilAnswer,
  ExfilQuery,
  GraphQuery,
  GrantsBody,
  NeighborsPage,
  NeighborsQuery,
  NodesAnswer,
  NodesBody,
  ObservationsBody,
  ReachabilityAnswer,
  RevokeBody,
  SummaryAnswer,
  WriteAnswer,
} from './schemas.js';
import { attackPathSummary } from './summary.js';

/** `limit=0` (or absent) means the engine default (spec client inputs). */
export function effectiveLimit(limit: number | undefined): number {
  return limit === undefined || limit === 0 ? ENGINE_DEFAULT_LIMIT : limit;
}

function bounds(q: { max_depth?: number; limit?: number; budget?: number }): SearchBounds {
  return {
    ...DEFAULT_BOUNDS,
    maxDepth: q.max_depth ?? DEFAULT_BOUNDS.maxDepth,
    limit: effectiveLimit(q.limit),
    budget: q.budget ?? DEFAULT_BOUNDS.budget,
  };
}

type ReadContext = Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId'>;

const read = { stability: 'beta' as const, tags: ['accessmap'], privileged: true };
const write = { stability: 'beta' as const, tags: ['accessmap'] };

export const accessmapRoutes: AnyRoute[] = [
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/graph',
    operationId: 'accessmapGraph',
    summary: 'Access-graph edges under filters (keyset pages; privileged read, audited)',
    permission: 'accessmap:graph:read',
    audit: 'accessmap.graph.read',
    query: GraphQuery,
    response: EdgePage,
    handler: (ctx) => listEdges(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: effectiveLimit(ctx.query.limit) }),
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/drift',
    operationId: 'accessmapDrift',
    summary: 'Drift: observed-but-not-permitted (unexpected) and permitted-but-never-observed (unused), with stated confidence',
    permission: 'accessmap:drift:read',
    audit: 'accessmap.drift.read',
    query: DriftQuery,
    response: DriftPage,
    handler: (ctx) => listDrift(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: effectiveLimit(ctx.query.limit) }),
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/neighbors',
    operationId: 'accessmapNeighbors',
    summary: "A node's access edges (paged) and structural links",
    permission: 'accessmap:graph:read',
    audit: 'accessmap.neighbors.read',
    query: NeighborsQuery,
    response: NeighborsPage,
    handler: (ctx) =>
      neighbors(ctx.services.store, tenantOf(ctx), {
        ...ctx.query,
        direction: ctx.query.direction ?? 'both',
        limit: effectiveLimit(ctx.query.limit),
      }),
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/attack-paths/escalation',
    operationId: 'accessmapEscalation',
    summary:
      'Principals an agent can come to act as, with shortest paths, ranked nearest first; bounded by a work budget (complete says ' +
      'whether it was reached)',
    permission: 'accessmap:graph:read',
    audit: 'accessmap.attack_paths.escalation.read',
    query: AgentPathQuery,
    response: EscalationAnswer,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      await assertAgent(ctx, tenant, ctx.query.agent_id);
      return withFoldedGraph(ctx.services.store, tenant, (g) => escalation(g, ctx.query.agent_id, bounds(ctx.query)));
    },
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/attack-paths/reachability',
    operationId: 'accessmapReachability',
    summary:
      'Resources an agent can reach directly or through escalation, with the path to each; bounded by a work budget (complete, total ' +
      'or total_at_least)',
    permission: 'accessmap:graph:read',
    audit: 'accessmap.attack_paths.reachability.read',
    query: AgentPathQuery,
    response: ReachabilityAnswer,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      await assertAgent(ctx, tenant, ctx.query.agent_id);
      return withFoldedGraph(ctx.services.store, tenant, (g) => reachability(g, ctx.query.agent_id, bounds(ctx.query)));
    },
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/attack-paths/exfil',
    operationId: 'accessmapExfil',
    summary:
      'Principals that can come to read a resource, with the path of each; bounded by a work budget (complete, total or total_at_least)',
    permission: 'accessmap:graph:read',
    audit: 'accessmap.attack_paths.exfil.read',
    query: ExfilQuery,
    response: ExfilAnswer,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const found = await ctx.services.store.withTenant(tenant, (tx) =>
        tx
          .selectFrom('access_nodes')
          .select('id')
          .where('tenant_id', '=', tenant)
          .where('kind', '=', 'resource')
          .where('id', '=', ctx.query.resource_id)
          .executeTakeFirst(),
      );
      if (!found) throw errors.notFound('resource');
      return withFoldedGraph(ctx.services.store, tenant, (g) => exfil(g, ctx.query.resource_id, bounds(ctx.query)));
    },
  }),
  route({
    ...read,
    method: 'GET',
    path: '/v1/m/accessmap/attack-paths/summary',
    operationId: 'accessmapAttackPathSummary',
    summary: 'Graph size, drift counts, attack surface and the agents with the most escalation targets',
    permission: 'accessmap:graph:read',
    audit: 'accessmap.attack_paths.summary.read',
    response: SummaryAnswer,
    timeoutMs: 15_000,
    handler: (ctx) => attackPathSummary(ctx.services.store, tenantOf(ctx)),
  }),
  route({
    ...write,
    method: 'POST',
    path: '/v1/m/accessmap/observations',
    operationId: 'accessmapIngestObservations',
    summary: 'Record observed accesses (the REST write path beside collector ingest)',
    permission: 'ingest:write',
    audit: 'accessmap.observations.ingest',
    body: ObservationsBody,
    response: WriteAnswer,
    bodyLimit: 4 * 1024 * 1024,
    handler: async (ctx) => {
      const out = await ingestObservations(ctx.services.store, tenantOf(ctx), ctx.body.observations);
      await ctx.audit({ kind: 'accessmap', id: '' }, { accepted: out.accepted, edges: out.edges });
      return out;
    },
  }),
  route({
    ...write,
    method: 'POST',
    path: '/v1/m/accessmap/grants',
    operationId: 'accessmapUpsertGrants',
    summary: 'Record permitted accesses (grants)',
    permission: 'accessmap:grant:write',
    audit: 'accessmap.grants.upsert',
    body: GrantsBody,
    response: WriteAnswer,
    bodyLimit: 4 * 1024 * 1024,
    handler: async (ctx) => {
      const out = await upsertGrants(ctx.services.store, tenantOf(ctx), ctx.body.grants);
      await ctx.audit({ kind: 'accessmap', id: '' }, { grants: ctx.body.grants.length, edges: out.edges });
      return { accepted: ctx.body.grants.length, edges: out.edges };
    },
  }),
  route({
    ...write,
    method: 'POST',
    path: '/v1/m/accessmap/grants/revoke',
    operationId: 'accessmapRevokeGrants',
    summary: 'Withdraw grants (an edge stays while it has observations)',
    permission: 'accessmap:grant:write',
    audit: 'accessmap.grants.revoke',
    body: RevokeBody,
    response: WriteAnswer,
    handler: async (ctx) => {
      const out = await revokeGrants(ctx.services.store, tenantOf(ctx), ctx.body.grants);
      await ctx.audit({ kind: 'accessmap', id: '' }, { grants: ctx.body.grants.length, edges: out.edges });
      return { accepted: ctx.body.grants.length, edges: out.edges };
    },
  }),
  route({
    ...write,
    method: 'POST',
    path: '/v1/m/accessmap/nodes',
    operationId: 'accessmapUpsertNodes',
    summary: 'Create or update sessions, identities and resources by natural key (class, parent)',
    permission: 'accessmap:graph:write',
    audit: 'accessmap.nodes.upsert',
    body: NodesBody,
    response: NodesAnswer,
    handler: async (ctx) => {
      const items = await writeNodes(ctx.services.store, tenantOf(ctx), ctx.body.nodes);
      await ctx.audit({ kind: 'accessmap', id: '' }, { nodes: items.length });
      return { items };
    },
  }),
];

async function assertAgent(ctx: ReadContext, tenant: string, id: string): Promise<void> {
  const found = await ctx.services.store.withTenant(tenant, (tx) =>
    tx.selectFrom('agents').select('id').where('tenant_id', '=', tenant).where('id', '=', id).executeTakeFirst(),
  );
  if (!found) throw errors.notFound('agent');
}
