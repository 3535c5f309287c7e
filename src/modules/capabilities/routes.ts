/** Routes of MCP server and tool configurations: `/v1/m/capabilities/configs…` (capabilities-service.ts holds the rules). */
import { route, type AnyRoute } from '../../contract/route.js';
import { ApiError } from '../../contract/errors.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import type { RequestContext } from '../../http/context.js';
import { SecretUnavailableError } from '../../core/console/secrets-service.js';
import {
  createConfig,
  deleteConfig,
  getConfig,
  listConfigRevisions,
  listConfigs,
  replaceConfig,
  resolveConfig,
  type CapabilityConfig,
} from './capabilities-service.js';
import { CheckResult, Config, ConfigBody, ConfigListQuery, ConfigPage, IdParams, RevisionPage } from './schemas.js';

const common = { stability: 'beta' as const, tags: ['capabilities'] };
const BASE = '/v1/m/capabilities/configs';

/** The ledger record of a change (the event is recorded with the change, in its transaction). */
async function recorded(
  ctx: Pick<RequestContext, 'audit'>,
  c: CapabilityConfig,
  revision: number,
  meta: Record<string, unknown> = {},
): Promise<void> {
  // Names of references only; a secret value never reaches the ledger (there is none in a configuration).
  await ctx.audit({ kind: 'capability_config', id: c.id }, { name: c.name, kind: c.kind, revision, secret_refs: c.secret_refs, ...meta });
}

export const capabilitiesRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: BASE,
    operationId: 'listCapabilityConfigs',
    summary: 'MCP server and tool configurations (keyset pages; filter by name or kind)',
    permission: 'capabilities:config:read',
    query: ConfigListQuery,
    response: ConfigPage,
    handler: (ctx) => listConfigs(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common,
    method: 'POST',
    path: BASE,
    operationId: 'createCapabilityConfig',
    summary: 'Create a configuration (revision 1); credentials only as secret:<name> references to existing secrets',
    permission: 'capabilities:config:write',
    audit: 'capabilities.config.create',
    body: ConfigBody,
    response: Config,
    status: 201,
    handler: async (ctx) => {
      const c = await ctx.services.events.withEvents((emit) =>
        createConfig(ctx.services.store, tenantOf(ctx), ctx.body, ctx.principal?.actor ?? 'system', emit),
      );
      await recorded(ctx, c, c.revision);
      return reply.json(c, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/{id}`,
    operationId: 'getCapabilityConfig',
    summary: 'One configuration (its current revision)',
    permission: 'capabilities:config:read',
    params: IdParams,
    response: Config,
    handler: (ctx) => getConfig(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'PUT',
    path: `${BASE}/{id}`,
    operationId: 'replaceCapabilityConfig',
    summary: 'Replace the whole configuration (a new revision); fields left out reset to the server defaults',
    permission: 'capabilities:config:write',
    audit: 'capabilities.config.replace',
    params: IdParams,
    body: ConfigBody,
    response: Config,
    handler: async (ctx) => {
      const { before, after } = await ctx.services.events.withEvents((emit) =>
        replaceConfig(ctx.services.store, tenantOf(ctx), ctx.params.id, ctx.body, ctx.principal?.actor ?? 'system', emit),
      );
      await recorded(ctx, after, after.revision, { previous_revision: before.revision });
      return after;
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: `${BASE}/{id}`,
    operationId: 'deleteCapabilityConfig',
    summary: 'Delete a configuration (recorded as its last revision; the history stays readable)',
    permission: 'capabilities:config:write',
    audit: 'capabilities.config.delete',
    params: IdParams,
    status: 204,
    handler: async (ctx) => {
      const c = await ctx.services.events.withEvents((emit) =>
        deleteConfig(ctx.services.store, tenantOf(ctx), ctx.params.id, ctx.principal?.actor ?? 'system', emit),
      );
      await recorded(ctx, c, c.revision + 1);
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/{id}/revisions`,
    operationId: 'listCapabilityConfigRevisions',
    summary: 'Every revision of a configuration, newest first',
    permission: 'capabilities:config:read',
    params: IdParams,
    response: RevisionPage,
    handler: (ctx) => listConfigRevisions(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/{id}/check`,
    operationId: 'checkCapabilityConfig',
    unaudited: 'read-only: resolves the secret references as a launcher would (no value answered), stores nothing',
    summary: 'Resolve every secret reference now, as a launcher would (values never returned); 503 when a referenced secret is gone',
    permission: 'capabilities:config:read',
    params: IdParams,
    response: CheckResult,
    handler: async (ctx) => {
      try {
        const { config } = await resolveConfig(ctx.services.store, ctx.services.sealer, tenantOf(ctx), ctx.params.id);
        return { id: config.id, revision: config.revision, ok: true as const, secrets: config.secret_refs };
      } catch (err) {
        // Fail closed: the configuration is not usable without its credential.
        if (err instanceof SecretUnavailableError)
          throw new ApiError('unavailable', `configuration ${ctx.params.id} cannot be used: ${err.message}`);
        throw err;
      }
    },
  }),
];
