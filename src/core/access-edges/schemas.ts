/**
 * The access edge as the stable core serves it (`GET /v1/access-edges`) and the access map module
 * reuses; defined here, below both, so core never builds on a beta module's files.
 */
import Type, { type Static } from 'typebox';
import { Timestamp, Uuid } from '../../contract/common.js';

export const OriginKind = Type.Enum(['agent', 'session', 'identity']);
export const ModeSchema = Type.Enum(['r', 'rw']);
export const ConfidenceSchema = Type.Enum(['high', 'medium', 'low']);

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const Edge = Type.Object(
  {
    id: Uuid,
    origin_kind: OriginKind,
    origin_id: Uuid,
    origin_name: Nullable(Type.String()),
    resource_id: Uuid,
    resource_name: Nullable(Type.String()),
    mode: ModeSchema,
    permitted: Type.Boolean(),
    grant_source: Type.String(),
    observed: Type.Boolean(),
    observed_count: Type.Integer({ minimum: 0 }),
    first_seen: Nullable(Timestamp),
    last_seen: Nullable(Timestamp),
    confidence: Nullable(ConfidenceSchema),
    signal_source: Type.String(),
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const EdgePage = Type.Object(
  { items: Type.Array(Edge), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

/** Filters of an edge listing (spec client inputs of graph and drift). */
export interface AccessEdgeFilter {
  confidence?: Static<typeof ConfidenceSchema>;
  mode?: Static<typeof ModeSchema>;
  origin_id?: string;
  origin_kind?: Static<typeof OriginKind>;
  resource_id?: string;
  signal_source?: string;
  cursor?: string;
  limit: number;
}

/** What core needs from whichever module keeps the access graph; the composition root wires it. */
export interface AccessEdgeReader {
  listEdges(tenant: string, filter: AccessEdgeFilter): Promise<Static<typeof EdgePage>>;
}
