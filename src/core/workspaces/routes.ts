/** Core workspace routes (spec Endpoints → workspaces): list, create, get, merge-patch; mutations audited. */
import Type from 'typebox';
import { Limit, Text, Timestamp, Uuid } from '../../contract/common.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { createWorkspace, getWorkspace, listWorkspaces, patchWorkspace } from './workspace-service.js';

const Path = Text({ minLength: 1, maxLength: 4096 });
const MountMode = Type.Union([Type.Literal('rw'), Type.Literal('ro')], { description: 'default rw' });
const Dlp = Type.Union([Type.Literal('label'), Type.Literal('deny'), Type.Literal('off')], {
  description: 'DLP posture on ' + 'reads; default label',
});
const Cap = Type.Integer({ minimum: 0, maximum: 1024 ** 4, description: 'per-read size cap in bytes; 0 means the default 5 MiB' });
const Subpaths = Type.Array(Text({ minLength: 1, maxLength: 1024 }), {
  maxItems: 256,
  description: 'relative to the root; ' + 'replaced whole on PATCH',
});

const fields = {
  root_path: Path,
  display_name: Text({ minLength: 1, maxLength: 200, description: 'default: the last segment of the root path' }),
  mount_mode: MountMode,
  dlp_posture: Dlp,
  read_cap_bytes: Cap,
  restricted_subpaths: Subpaths,
  mount_target: Text({ minLength: 1, maxLength: 1024, description: 'container mount target; default /workspace' }),
};

const Workspace = Type.Object(
  {
    id: Uuid,
    tenant_id: Uuid,
    display_name: Type.String(),
    root_path: Type.String(),
    mount_mode: MountMode,
    dlp_posture: Dlp,
    read_cap_bytes: Type.Integer({ minimum: 0 }),
    effective_read_cap_bytes: Type.Integer({ minimum: 1 }),
    restricted_subpaths: Type.Array(Type.String()),
    mount_target: Type.String(),
    version: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

const CreateBody = Type.Object(
  {
    root_path: fields.root_path,
    display_name: Type.Optional(fields.display_name),
    mount_mode: Type.Optional(fields.mount_mode),
    dlp_posture: Type.Optional(fields.dlp_posture),
    read_cap_bytes: Type.Optional(fields.read_cap_bytes),
    restricted_subpaths: Type.Optional(fields.restricted_subpaths),
    mount_target: Type.Optional(fields.mount_target),
  },
  { additionalProperties: false },
);

const PatchBody = Type.Object(
  {
    version: Type.Integer({ minimum: 1, description: 'the version the change is based on; a stale one → 409 conflict' }),
    root_path: Type.Optional(fields.root_path),
    display_name: Type.Optional(fields.display_name),
    mount_mode: Type.Optional(fields.mount_mode),
    dlp_posture: Type.Optional(fields.dlp_posture),
    read_cap_bytes: Type.Optional(fields.read_cap_bytes),
    restricted_subpaths: Type.Optional(fields.restricted_subpaths),
    mount_target: Type.Optional(fields.mount_target),
  },
  { additionalProperties: false },
);

const Page = Type.Object(
  { items: Type.Array(Workspace), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
const ListQuery = Type.Object(
  { limit: Type.Optional(Limit), cursor: Type.Optional(Text({ maxLength: 200 })) },
  { additionalProperties: false },
);
const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

const common = { stability: 'stable' as const, tags: ['workspaces'] };

export const workspaceRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/workspaces',
    operationId: 'listWorkspaces',
    summary: 'List governed workspaces',
    permission: 'workspace:read',
    query: ListQuery,
    response: Page,
    handler: (ctx) => listWorkspaces(ctx.services.store, tenantOf(ctx), { cursor: ctx.query.cursor, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/workspaces',
    operationId: 'createWorkspace',
    summary: 'Register a governed workspace (defaults: rw, DLP label, 5 MiB per read, mounted at /workspace)',
    permission: 'workspace:write',
    audit: 'workspace.create',
    body: CreateBody,
    response: Workspace,
    status: 201,
    handler: async (ctx) => {
      // The event is written in the workspace's transaction (durable log), announced after the commit.
      const ws = await ctx.services.events.withEvents((emit) =>
        createWorkspace(ctx.services.store, tenantOf(ctx), ctx.body, (tx, w) =>
          emit(
            { type: 'workspace.created', tenant: w.tenant_id, subject: `workspace/${w.id}`, data: { id: w.id, root_path: w.root_path } },
            tx,
          ),
        ),
      );
      await ctx.audit(
        { kind: 'workspace', id: ws.id },
        { root_path: ws.root_path, mount_mode: ws.mount_mode, dlp_posture: ws.dlp_posture },
      );
      return reply.json(ws, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/workspaces/{id}',
    operationId: 'getWorkspace',
    summary: 'One governed workspace',
    permission: 'workspace:read',
    params: IdParams,
    response: Workspace,
    handler: (ctx) => getWorkspace(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'PATCH',
    path: '/v1/workspaces/{id}',
    operationId: 'patchWorkspace',
    summary: 'Merge-patch a workspace; `version` must be current (409 otherwise)',
    permission: 'workspace:write',
    audit: 'workspace.update',
    params: IdParams,
    body: PatchBody,
    response: Workspace,
    handler: async (ctx) => {
      const { workspace, changed } = await ctx.services.events.withEvents((emit) =>
        patchWorkspace(ctx.services.store, tenantOf(ctx), ctx.params.id, ctx.body, (tx, w, ch) =>
          emit(
            {
              type: 'workspace.updated',
              tenant: w.tenant_id,
              subject: `workspace/${w.id}`,
              data: { id: w.id, version: w.version, changed: ch },
            },
            tx,
          ),
        ),
      );
      await ctx.audit({ kind: 'workspace', id: workspace.id }, { changed, version: workspace.version });
      return workspace;
    },
  }),
];
