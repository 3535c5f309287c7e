/**
 * Kysely table types of output connectors and the collector source roster (migration 26).
 * `connectors` and `console_sources` are global (server administration, `system:admin` routes; a
 * connector names one tenant or none = every tenant, in `scope_tenant_id`: a global table has no
 * `tenant_id` column, which on Postgres would demand row-level security). The per-tenant delivery state of a connector,
 * its cursors over that tenant's ledger and event log, lives in `connector_cursors`, a tenant table
 * under row-level security: one row per (connector, tenant), whose id is the delivery lane id, so the
 * connector's deliveries sit in the tenant's own `event_deliveries` rows like webhook deliveries.
 */
import type { ColumnType } from 'kysely';

type Big = ColumnType<number | string, number, number>;

/** An output connector: kind, format, the kind's config (secret references only, never values), sources. */
export interface ConnectorsTable {
  id: string;
  name: string;
  kind: string;
  /** null: every tenant */
  scope_tenant_id: string | null;
  format: string;
  /** JSON object validated by the kind's schema */
  config: string;
  /** JSON object: { ledger: boolean, events: { types: string[], min_severity: string | null } | null } */
  sources: string;
  enabled: number;
  max_attempts: number;
  initial_interval_s: number;
  /** JSON array of `secret:<name>` references found in config */
  secret_refs: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** One tenant's cursor of one connector over one source; `id` is the delivery lane (event_deliveries.subscription_id). */
export interface ConnectorCursorsTable {
  id: string;
  tenant_id: string;
  connector_id: string;
  /** `ledger` (the tenant's audit chain, by seq) or `events` (the durable event log, by sequence) */
  source: string;
  /** everything up to this seq was turned into delivery batches */
  cursor_seq: Big;
  /** the highest seq a receiver took (delivered batches) */
  delivered_seq: Big;
  /** when the last batch was delivered */
  delivered_at: string | null;
  created_at: string;
}

/** A collector source connector as the console knows it. */
export interface ConsoleSourcesTable {
  id: string;
  name: string;
  kind: string;
  /** the tenant the source writes to (not `tenant_id`: the table is global, not under row-level security) */
  scope_tenant_id: string;
  enabled: number;
  poll_interval_s: number;
  /** JSON object */
  config: string;
  last_seen_at: string | null;
  /** JSON object of counters the collector reports (observations, errors…) */
  counts: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface ConnectorTables {
  connectors: ConnectorsTable;
  connector_cursors: ConnectorCursorsTable;
  console_sources: ConsoleSourcesTable;
}

export const CONNECTOR_TENANT_TABLES = ['connector_cursors'] as const;
export const CONNECTOR_GLOBAL_TABLES = ['connectors', 'console_sources'] as const;

/** What the Postgres app role may do on these tables (merged into APP_ROLE_GRANTS). */
export const CONNECTOR_APP_ROLE_GRANTS = {
  connectors: ['select', 'insert', 'update', 'delete'],
  connector_cursors: ['select', 'insert', 'update', 'delete'],
  console_sources: ['select', 'insert', 'update', 'delete'],
} as const satisfies Record<keyof ConnectorTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
