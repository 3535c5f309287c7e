/** Kysely table types of the ledger area (migration 3); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

/**
 * Hashes, blinds, signatures, key ids and record ids are stored as raw bytes (BLOB / bytea), not hex
 * or base64 text: half the bytes per record (the ≤ 400 B/record target, bench ledger-append). The
 * ledger store converts them to the hex/base64 the wire and the preimages use.
 */
type Bytes = Buffer;
/** bigint on Postgres comes back as a string; written as a number. */
type SeqColumn = ColumnType<number | string, number, never>;

/**
 * `audit_records` as on Postgres: one row per chained, signed record; append-only (triggers + grants).
 * `prev_hash` is not a column: it is the previous row's hash. On SQLite the table is keyed by
 * `pos = chain << 40 | seq` instead of (tenant_id, seq) and only src/ledger (ledger-store.ts and its siblings) touches it, in SQL.
 */
export interface AuditRecordsTable {
  tenant_id: string;
  seq: SeqColumn;
  /** 16 bytes of the UUIDv7 */
  id: Bytes;
  occurred_at: string;
  actor: string;
  actor_kind: string;
  action: string;
  target_kind: string;
  target_id: string;
  /** canonical JSON text; null once erased */
  meta: string | null;
  /** 32 bytes; null once erased */
  meta_blind: Bytes | null;
  /** stored only once meta is erased (otherwise recomputed from blind + meta) */
  meta_commitment: Bytes | null;
  payload_hash: Bytes | null;
  hash: Bytes;
  sig: Bytes;
  /** 16 bytes (key ids are 32 hex digits) */
  key_id: Bytes;
}

/** `audit_heads`: each chain's tip, so truncation of the tail is detected. */
export interface AuditHeadsTable {
  tenant_id: string;
  seq: ColumnType<number | string, number, number>;
  hash: Bytes;
}

/** `audit_intents`: a committed change waiting for its request's audit record (ledger/audit-intent.ts). */
export interface AuditIntentsTable {
  id: string;
  /** the request's intent scope (one per mutating request) */
  scope: string;
  /** the chain (tenant id) the change belongs to, the system chain for unbound transactions; not an RLS column: the table is global */
  chain: string;
  actor: string;
  actor_kind: string;
  /** `METHOD /route/template` */
  route: string;
  request_id: string;
  created_at: string;
}

/** Tables of the ledger area. */
export interface LedgerTables {
  audit_records: AuditRecordsTable;
  audit_heads: AuditHeadsTable;
  audit_intents: AuditIntentsTable;
}

/** ledger tables with a `tenant_id` column (RLS on Postgres). */
export const LEDGER_TENANT_TABLES = ['audit_records', 'audit_heads'] as const;

/** ledger tables shared by all tenants. */
export const LEDGER_GLOBAL_TABLES = ['audit_intents'] as const;
