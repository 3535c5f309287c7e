/** Kysely table types of the collector ingest area (migration 6); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

/** bigint on Postgres comes back as a string; written as a number. */
type BigCount = ColumnType<number | string, number, number>;

/**
 * `ingest_batches`: one row per batch id a tenant has committed (idempotency of collector pushes).
 * Written in the same transaction as the batch's items, so "seen" and "stored" cannot disagree.
 */
export interface IngestBatchesTable {
  tenant_id: string;
  /** the collector-supplied UUID */
  batch_id: string;
  collector: string;
  accepted: number;
  /** JSON array of `{kind, index, reason}` as answered the first time */
  rejected: string;
  /** hex SHA-256 of the canonical accepted items: the ledger record's payload_hash */
  payload_hash: string;
  /** the tenant chain's head seq when the batch committed; the ledger record is above it */
  head_seq: BigCount;
  /** seq of the batch's `ingest.batch` ledger record; null until that record is committed */
  ledger_seq: ColumnType<number | string | null, number | null, number | null>;
  created_at: string;
}

/** `ingest_items`: findings and cost samples pushed by collectors, kept for the modules that read them. */
export interface IngestItemsTable {
  id: string;
  tenant_id: string;
  batch_id: string;
  /** `finding` or `cost` */
  kind: string;
  /** canonical JSON of the item */
  body: string;
  observed_at: string;
  created_at: string;
}

/** Tables of the ingest area. */
export interface IngestTables {
  ingest_batches: IngestBatchesTable;
  ingest_items: IngestItemsTable;
}

/** ingest tables with a `tenant_id` column (RLS on Postgres). */
export const INGEST_TENANT_TABLES = ['ingest_batches', 'ingest_items'] as const;

/** ingest tables shared by all tenants. */
export const INGEST_GLOBAL_TABLES = [] as const;

/** What the Postgres app role may do on the ingest tables (spread into APP_ROLE_GRANTS). */
export const INGEST_APP_ROLE_GRANTS = {
  ingest_batches: ['select', 'insert', 'update'],
  ingest_items: ['select', 'insert', 'delete'],
} as const satisfies Record<keyof IngestTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
