/** Kysely table types of the security module's findings (migration 21); merged into `Database` in schema.ts. */
import type { ColumnType } from 'kysely';

type Int = ColumnType<number, number, number>;
type NullableInt = ColumnType<number | null, number | null | undefined, number | null>;

/**
 * `security_findings`: one row per distinct problem of a tenant, keyed by its natural key (rule,
 * subject, artifact and region): a re-report bumps `occurrences` and `last_seen` instead of adding
 * a row. `rule_id` and `severity` are checked by the write paths, not by the table, so a corrupt
 * stored value reaches the SARIF encoder and is refused there, named (spec: SARIF rules 3).
 */
export interface SecurityFindingsTable {
  id: string;
  tenant_id: string;
  /** hex SHA-256 of the natural key (finding-key.ts) */
  natural_key: string;
  rule_id: string;
  kind: string;
  severity: string;
  /** `collector`, `integration` or `detector` */
  source: string;
  subject_kind: string;
  subject_ref: string;
  message: string;
  artifact_uri: string | null;
  region_start_line: NullableInt;
  region_end_line: NullableInt;
  /** JSON array of strings */
  tags: string;
  /** JSON object: what the reporter saw (a detector's drift item or attack path) */
  evidence: string;
  /** JSON array of `{tenant, seq, action}`: ledger records this finding rests on */
  ledger_refs: string;
  first_seen: string;
  last_seen: string;
  occurrences: Int;
  /** `open`, `acknowledged`, `resolved`, `suppressed` */
  status: string;
  /** who set the status (`user:<id>`, `token:<id>`, `system`) */
  status_by: string;
  status_note: string;
  status_at: string;
  version: Int;
  created_at: string;
  updated_at: string;
}

/** `security_ingest_marks`: per tenant, the last collector ingest item already folded into findings. */
export interface SecurityIngestMarksTable {
  tenant_id: string;
  last_item_id: string;
  updated_at: string;
}

export interface SecurityTables {
  security_findings: SecurityFindingsTable;
  security_ingest_marks: SecurityIngestMarksTable;
}

/** security tables with a `tenant_id` column (RLS on Postgres). */
export const SECURITY_TENANT_TABLES = ['security_findings', 'security_ingest_marks'] as const;

/** security tables shared by all tenants. */
export const SECURITY_GLOBAL_TABLES = [] as const;

/** What the Postgres app role may do on the security tables (spread into APP_ROLE_GRANTS); findings are never deleted, only resolved. */
export const SECURITY_APP_ROLE_GRANTS = {
  security_findings: ['select', 'insert', 'update'],
  security_ingest_marks: ['select', 'insert', 'update'],
} as const satisfies Record<keyof SecurityTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
