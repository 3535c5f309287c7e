/**
 * `GET /v1/access-edges` (spec Endpoints → agents): the access graph's edges as a core list. A
 * privileged read (editor and above, never viewer) and each call is audited (DECISIONS.md).
 */
import Type from 'typebox';
import { Limit, Text } from '../../contract/common.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { ConfidenceSchema, EdgePage, ModeSchema, OriginKind } from './schemas.js';
import { Uuid } from '../../contract/common.js';
import { tenantOf } from '../../http/request-scope.js';

const Query = Type.Object(
  {
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Text({ maxLength: 200 })),
    confidence: Type.Optional(ConfidenceSchema),
    mode: Type.Optional(ModeSchema),
    origin_id: Type.Optional(Uuid),
    origin_kind: Type.Optional(OriginKind),
    resource_id: Type.Optional(Uuid),
    signal_source: Type.Optional(Text({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
);

export const accessEdgeRoutes: AnyRoute[] = [
  route({
    stability: 'stable',
    tags: ['agents'],
    method: 'GET',
    path: '/v1/access-edges',
    operationId: 'listAccessEdges',
    summary: 'Access edges (permitted and observed), keyset pages; privileged read, audited',
    permission: 'access_edge:read',
    privileged: true,
    audit: 'access_edges.read',
    query: Query,
    response: EdgePage,
    handler: (ctx) => {
      // The authenticator appends the privileged-read record from `audit` (src/auth/authenticator.ts).
      return ctx.services.accessEdges.listEdges(tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 });
    },
  }),
];
