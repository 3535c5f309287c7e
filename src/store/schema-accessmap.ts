/** Kysely table types of the accessmap area (migration 5); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

/** bigint on Postgres comes back as a string; written as a number. */
type Count = ColumnType<number | string, number, number>;
/** A node number (migration 10): bigint on Postgres, read as a string there; given on insert or left to the store; never updated. */
type NodeNo = ColumnType<number | string, number | undefined, never>;
/** The node number of an edge's end: always written with the edge. */
type EndNo = ColumnType<number | string, number, number>;
/** An edge's place in store order (migration 14): the store assigns it; never written or updated. */
type EdgeSeq = ColumnType<number | string, never, never>;

/** `workspaces`: governed workspaces (spec "Governed workspace"). */
export interface WorkspacesTable {
  id: string;
  tenant_id: string;
  display_name: string;
  root_path: string;
  /** `rw` (default) or `ro` */
  mount_mode: string;
  /** DLP posture on reads: `label` (default), `deny`, `off` */
  dlp_posture: string;
  /** per-read size cap in bytes; 0 means the default 5 MiB */
  read_cap_bytes: number;
  /** JSON array of relative subpaths */
  restricted_subpaths: string;
  /** container mount target, default `/workspace` */
  mount_target: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** `access_nodes`: graph nodes other than agents (sessions, identities, resources). */
export interface AccessNodesTable {
  id: string;
  tenant_id: string;
  /** `session`, `identity` or `resource` */
  kind: string;
  /** natural key from the source (e.g. an ARN, a path, a session id of the runtime); unique per tenant and kind */
  ref: string;
  name: string;
  /** resources only: `data`, `config`, `code` or `credential` (docs/accessmap.md attack paths); `''` otherwise */
  class: string;
  /** sessions: the agent running it; credential resources: the identity it authenticates as; else null */
  parent_id: string | null;
  created_at: string;
  /** node number (migration 10): one integer space per database with agents.no, never reused */
  no: NodeNo;
}

/** `access_edges`: one row per (origin, resource, mode); permitted and/or observed. */
export interface AccessEdgesTable {
  /** order of storing (migration 14): SQLite's rowid, a Postgres identity; what node-seeking pages walk */
  seq: EdgeSeq;
  id: string;
  tenant_id: string;
  /** `agent`, `session` or `identity` */
  origin_kind: string;
  origin_id: string;
  resource_id: string;
  /** node numbers of the two ends (migration 10): what the key and the resource index hold */
  origin_no: EndNo;
  resource_no: EndNo;
  /** `r` or `rw` */
  mode: string;
  /** 1 when a grant allows this access */
  permitted: number;
  /** where the grant came from (`''` when not permitted) */
  grant_source: string;
  observed_count: Count;
  first_seen: string | null;
  last_seen: string | null;
  /** attribution confidence of the observations: `high`, `medium`, `low`; `''` when never observed */
  confidence: string;
  /** signal source of the latest observation, or of the grant when never observed */
  signal_source: string;
  created_at: string;
  updated_at: string;
}

/** Tables of the accessmap area. */
export interface AccessmapTables {
  workspaces: WorkspacesTable;
  access_nodes: AccessNodesTable;
  access_edges: AccessEdgesTable;
}

/** accessmap tables with a `tenant_id` column (RLS on Postgres). */
export const ACCESSMAP_TENANT_TABLES = ['workspaces', 'access_nodes', 'access_edges'] as const;

/** accessmap tables shared by all tenants. */
export const ACCESSMAP_GLOBAL_TABLES = [] as const;

// Migration 5 adds `labels` to the `agents` table of migration 1; declared here so the area owns it.
declare module './schema.js' {
  interface AgentsTable {
    /**
     * JSON object of string labels (default `{}`); PATCH merges it key by key (RFC 7396). Optional so rows of migration 1 still type-check.
     */
    labels?: string;
    /**
     * node number (migration 10), from the space access_nodes.no shares (a string on Postgres); optional so rows of migration 1 still
     * type-check; never updated (a trigger refuses)
     */
    no?: number | string;
  }
}

/** What the Postgres app role may do on the accessmap tables (spread into APP_ROLE_GRANTS). */
export const ACCESSMAP_APP_ROLE_GRANTS = {
  workspaces: ['select', 'insert', 'update', 'delete'],
  access_nodes: ['select', 'insert', 'update', 'delete'],
  access_edges: ['select', 'insert', 'update', 'delete'],
} as const satisfies Record<keyof AccessmapTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
