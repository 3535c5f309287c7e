/** Core agent routes (spec Endpoints → agents): list, create, get, merge-patch, delete; every mutation audited. */
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { createAgent, deleteAgent, getAgent, listAgents, patchAgent } from './agent-service.js';
import { Agent, AgentCreateBody, AgentDeleteQuery, AgentListQuery, AgentPage, AgentPatchBody, IdParams } from './schemas.js';
import { tenantOf } from '../../http/request-scope.js';

const common = { stability: 'stable' as const, tags: ['agents'] };

export const agentRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/agents',
    operationId: 'listAgents',
    summary: 'List agents (keyset pages in creation order)',
    permission: 'agent:read',
    query: AgentListQuery,
    response: AgentPage,
    handler: (ctx) => listAgents(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/agents',
    operationId: 'createAgent',
    summary: 'Register an agent',
    permission: 'agent:write',
    audit: 'agent.create',
    body: AgentCreateBody,
    response: Agent,
    status: 201,
    handler: async (ctx) => {
      // The event is written in the agent's transaction (durable log), announced after the commit.
      const agent = await ctx.services.events.withEvents((emit) =>
        createAgent(ctx.services.store, tenantOf(ctx), ctx.body, (tx, a) =>
          emit(
            {
              type: 'agent.created',
              tenant: a.tenant_id,
              subject: `agent/${a.id}`,
              data: { id: a.id, name: a.name, kind: a.kind, external_id: a.external_id, status: a.status },
            },
            tx,
          ),
        ),
      );
      await ctx.audit(
        { kind: 'agent', id: agent.id },
        { name: agent.name, kind: agent.kind, external_id: agent.external_id, status: agent.status },
      );
      return reply.json(agent, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/agents/{id}',
    operationId: 'getAgent',
    summary: 'One agent',
    permission: 'agent:read',
    params: IdParams,
    response: Agent,
    handler: (ctx) => getAgent(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'PATCH',
    path: '/v1/agents/{id}',
    operationId: 'patchAgent',
    summary: 'Merge-patch an agent: absent fields stay, labels merge per RFC 7396; `version` must be current (409 otherwise)',
    permission: 'agent:write',
    audit: 'agent.update',
    params: IdParams,
    body: AgentPatchBody,
    response: Agent,
    handler: async (ctx) => {
      const { agent, changed } = await ctx.services.events.withEvents((emit) =>
        patchAgent(ctx.services.store, tenantOf(ctx), ctx.params.id, ctx.body, (tx, a, ch) =>
          emit(
            { type: 'agent.updated', tenant: a.tenant_id, subject: `agent/${a.id}`, data: { id: a.id, version: a.version, changed: ch } },
            tx,
          ),
        ),
      );
      await ctx.audit({ kind: 'agent', id: agent.id }, { changed, version: agent.version });
      return agent;
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/agents/{id}',
    operationId: 'deleteAgent',
    summary: 'Delete an agent and its access edges',
    permission: 'agent:write',
    audit: 'agent.delete',
    params: IdParams,
    query: AgentDeleteQuery,
    status: 204,
    handler: async (ctx) => {
      const agent = await ctx.services.events.withEvents((emit) =>
        deleteAgent(ctx.services.store, ctx.services.hooks, tenantOf(ctx), ctx.params.id, ctx.query.version, (tx, a) =>
          emit({ type: 'agent.deleted', tenant: a.tenant_id, subject: `agent/${a.id}`, data: { id: a.id, name: a.name } }, tx),
        ),
      );
      await ctx.audit({ kind: 'agent', id: agent.id }, { name: agent.name, version: agent.version });
      return reply.empty(204);
    },
  }),
];
