/** Wire schemas of the accessmap module routes (beta; `/openapi.beta.json`). */
import Type from 'typebox';
import { Text, Timestamp, Uuid } from '../../contract/common.js';
import { ConfidenceSchema, Edge, ModeSchema, OriginKind } from '../../core/access-edges/schemas.js';
import { DEFAULT_BUDGET, MAX_BUDGET } from './attack-paths.js';


export { OriginKind, ModeSchema, ConfidenceSchema, Edge, EdgePage } from '../../core/access-edges/schemas.js';
export const NodeKindSchema = Type.Enum(['agent', 'session', 'identity', 'resource']);
export const ResourceClassSchema = Type.Enum(['data', 'config', 'code', 'credential'], {
  description: 'what the resource is to its readers (attack-path semantics)',
});

/** `limit` of module routes: 0..1000, 0 (default) meaning the engine default of 100. */
export const ModuleLimit = Type.Integer({ minimum: 0, maximum: 1000, default: 0, description: '0 means the engine default (100)' });
const Cursor = Text({ maxLength: 200, description: 'opaque; from the previous page' });
const SignalSource = Text({ minLength: 1, maxLength: 128 });

const filterFields = {
  confidence: Type.Optional(Type.Enum(['high', 'medium', 'low'], { description: 'floor: this confidence or stronger' })),
  cursor: Type.Optional(Cursor),
  limit: Type.Optional(ModuleLimit),
  mode: Type.Optional(ModeSchema),
  origin_id: Type.Optional(Uuid),
  origin_kind: Type.Optional(OriginKind),
  resource_id: Type.Optional(Uuid),
  signal_source: Type.Optional(SignalSource),
};

export const GraphQuery = Type.Object(filterFields, { additionalProperties: false });
export const DriftQuery = Type.Object(
  { ...filterFields, drift: Type.Optional(Type.Enum(['unexpected', 'unused'])) },
  { additionalProperties: false },
);
export const NeighborsQuery = Type.Object(
  {
    id: Uuid,
    kind: Type.Optional(NodeKindSchema),
    direction: Type.Optional(Type.Enum(['outgoing', 'incoming', 'both'], { description: 'default both' })),
    limit: Type.Optional(ModuleLimit),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
const MaxDepth = Type.Integer({ minimum: 1, maximum: 8, default: 6, description: 'principal hops searched (default 6)' });
const Budget = Type.Integer({
  minimum: 1,
  maximum: MAX_BUDGET,
  default: DEFAULT_BUDGET,
  description:
    `access edges the search may examine (default ${DEFAULT_BUDGET}, ` +
    `at most ${MAX_BUDGET}); a search it stops answers complete: false`,
});
const searchFields = { max_depth: Type.Optional(MaxDepth), limit: Type.Optional(ModuleLimit), budget: Type.Optional(Budget) };
export const AgentPathQuery = Type.Object({ agent_id: Uuid, ...searchFields }, { additionalProperties: false });
export const ExfilQuery = Type.Object({ resource_id: Uuid, ...searchFields }, { additionalProperties: false });

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);


const DriftItem = Type.Object(
  { ...Edge.properties, drift: Type.Enum(['unexpected', 'unused']), drift_confidence: ConfidenceSchema, basis: Type.String() },
  { additionalProperties: false },
);
export const DriftPage = Type.Object(
  { items: Type.Array(DriftItem), has_more: Type.Boolean(), cursor: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export const Node = Type.Object(
  {
    id: Uuid,
    kind: NodeKindSchema,
    ref: Type.String(),
    name: Type.String(),
    class: Nullable(ResourceClassSchema),
    parent_id: Nullable(Uuid),
  },
  { additionalProperties: false },
);

export const NeighborsPage = Type.Object(
  {
    node: Node,
    links: Type.Array(
      Type.Object(
        { relation: Type.Enum(['runs', 'authenticates_as']), direction: Type.Enum(['outgoing', 'incoming']), node: Node },
        { additionalProperties: false },
      ),
    ),
    items: Type.Array(Edge),
    has_more: Type.Boolean(),
    cursor: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const NodeRef = Type.Object({ kind: NodeKindSchema, id: Uuid, name: Nullable(Type.String()) }, { additionalProperties: false });
const Hop = Type.Object(
  {
    from: NodeRef,
    to: NodeRef,
    via: Type.Enum(['runs', 'credential', 'writes', 'access']),
    resource_id: Nullable(Uuid),
    mode: Nullable(ModeSchema),
    basis: Type.Enum(['structure', 'permitted', 'observed', 'permitted+observed']),
    confidence: Nullable(ConfidenceSchema),
  },
  { additionalProperties: false },
);
const Path = Type.Object(
  { length: Type.Integer({ minimum: 1 }), confidence: ConfidenceSchema, hops: Type.Array(Hop) },
  { additionalProperties: false },
);

/** How far a search got (attack-paths.ts SearchExtent), and its counts: exact only when complete. */
const extentFields = {
  truncated: Type.Boolean({ description: 'more paths exist than returned (limit), or the search was not complete' }),
  complete: Type.Boolean({
    description: 'false when the work budget or the principal cap stopped the search before it examined everything within max_depth',
  }),
  examined: Type.Object(
    { edges: Type.Integer({ minimum: 0 }), budget: Type.Integer({ minimum: 1 }) },
    { additionalProperties: false, description: 'access edges the search examined, and its budget' },
  ),
};
const totalFields = {
  total: Type.Optional(Type.Integer({ minimum: 0, description: 'how many were found; present only when complete' })),
  total_at_least: Type.Optional(Type.Integer({ minimum: 0, description: 'a lower bound of the total; present only when not complete' })),
};

export const EscalationAnswer = Type.Object(
  { start: NodeRef, targets: Type.Array(Type.Object({ target: NodeRef, path: Path }, { additionalProperties: false })), ...extentFields },
  { additionalProperties: false },
);
export const ReachabilityAnswer = Type.Object(
  {
    start: NodeRef,
    items: Type.Array(
      Type.Object(
        {
          resource: Type.Object({ ...NodeRef.properties, class: Nullable(ResourceClassSchema) }, { additionalProperties: false }),
          mode: ModeSchema,
          path: Path,
        },
        { additionalProperties: false },
      ),
    ),
    ...totalFields,
    ...extentFields,
  },
  { additionalProperties: false },
);
export const ExfilAnswer = Type.Object(
  {
    resource: NodeRef,
    items: Type.Array(Type.Object({ principal: NodeRef, mode: ModeSchema, path: Path }, { additionalProperties: false })),
    ...totalFields,
    ...extentFields,
  },
  { additionalProperties: false },
);

export const SummaryAnswer = Type.Object(
  {
    nodes: Type.Object({
      agents: Type.Integer(),
      sessions: Type.Integer(),
      identities: Type.Integer(),
      resources: Type.Integer(),
      resources_by_class: Type.Record(Type.String(), Type.Integer()),
    }),
    edges: Type.Object({
      total: Type.Integer(),
      permitted: Type.Integer(),
      observed: Type.Integer(),
      permitted_and_observed: Type.Integer(),
    }),
    drift: Type.Object({ unexpected: Type.Integer(), unused: Type.Integer() }),
    attack_surface: Type.Object({ credential_accesses: Type.Integer(), control_writes: Type.Integer() }),
    escalation: Type.Object({
      agents_total: Type.Integer(),
      agents_evaluated: Type.Integer(),
      agents_with_paths: Type.Integer(),
      complete: Type.Boolean(),
      top: Type.Array(
        Type.Object({
          agent: Type.Object({ id: Uuid, name: Type.String() }),
          targets: Type.Integer(),
          shortest: Type.Integer(),
          reachable_resources: Type.Integer(),
        }),
      ),
    }),
  },
  { additionalProperties: false },
);

const Ref = Text({ minLength: 1, maxLength: 512, description: "the source's natural key (ARN, path, account name…)" });
const NodeName = Text({ minLength: 1, maxLength: 200 });
const OriginSpec = Type.Object(
  { kind: OriginKind, id: Type.Optional(Uuid), ref: Type.Optional(Ref), name: Type.Optional(NodeName) },
  { additionalProperties: false, description: 'id, or ref (agents: external_id; sessions and identities are created on first sight)' },
);
const ResourceSpec = Type.Object(
  { id: Type.Optional(Uuid), ref: Type.Optional(Ref), name: Type.Optional(NodeName), class: Type.Optional(ResourceClassSchema) },
  { additionalProperties: false, description: 'id, or ref (created on first sight with class data unless given)' },
);

export const ObservationsBody = Type.Object(
  {
    observations: Type.Array(
      Type.Object(
        {
          origin: OriginSpec,
          resource: ResourceSpec,
          mode: ModeSchema,
          confidence: ConfidenceSchema,
          attribution: Type.Optional(
            Type.Enum(['direct', 'inferred', 'shared_identity'], {
              description: 'default direct; inferred caps confidence at medium, shared_identity at low',
            }),
          ),
          signal_source: SignalSource,
          observed_at: Type.Optional(Timestamp),
          count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 5000 },
    ),
  },
  { additionalProperties: false },
);

export const GrantsBody = Type.Object(
  {
    grants: Type.Array(
      Type.Object({ origin: OriginSpec, resource: ResourceSpec, mode: ModeSchema, source: SignalSource }, { additionalProperties: false }),
      { minItems: 1, maxItems: 5000 },
    ),
  },
  { additionalProperties: false },
);

export const RevokeBody = Type.Object(
  {
    grants: Type.Array(Type.Object({ origin: OriginSpec, resource: ResourceSpec, mode: ModeSchema }, { additionalProperties: false }), {
      minItems: 1,
      maxItems: 5000,
    }),
  },
  { additionalProperties: false },
);

export const NodesBody = Type.Object(
  {
    nodes: Type.Array(
      Type.Object(
        {
          kind: Type.Enum(['session', 'identity', 'resource']),
          ref: Ref,
          name: Type.Optional(NodeName),
          class: Type.Optional(ResourceClassSchema),
          parent_id: Type.Optional(Nullable(Uuid)),
        },
        {
          additionalProperties: false,
          description: 'parent_id: a session names its agent, a credential resource the identity it authenticates as',
        },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
  },
  { additionalProperties: false },
);

export const WriteAnswer = Type.Object(
  { accepted: Type.Integer({ minimum: 0 }), edges: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
export const NodesAnswer = Type.Object({ items: Type.Array(Node) }, { additionalProperties: false });
