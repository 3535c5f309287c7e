/**
 * Kysely table types of the compliance module (migration 25): legal holds, erasure requests, custody; merged into `Database` in schema.ts.
 */

/** `cmp_holds`: a legal hold; `active` from placement until a dual-control release makes it `released`. */
export interface CmpHoldsTable {
  id: string;
  tenant_id: string;
  /** `tenant`, `data_class` or `subject` */
  scope: string;
  subject_kind: string;
  subject_ref: string;
  data_class: string;
  matter: string;
  reason: string;
  title: string;
  on_behalf_of: string;
  /** `active` or `released` */
  status: string;
  placed_by: string;
  released_by: string | null;
  release_approval_id: string | null;
  released_at: string | null;
  created_at: string;
  updated_at: string;
}

/** `cmp_erasures`: an erasure request; registering destroys nothing, execution needs dual control. */
export interface CmpErasuresTable {
  id: string;
  tenant_id: string;
  case_ref: string;
  subject_kind: string;
  subject_ref: string;
  /** JSON array of strings */
  aliases: string;
  /** JSON array of strings */
  data_classes: string;
  reason: string;
  /** `received`, `pending_approval`, `completed` */
  status: string;
  requested_by: string;
  approval_id: string | null;
  /** JSON object of the receipt, once completed */
  receipt: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** `cmp_custody`: the append-only custody chain of holds and erasures, each step tied to its ledger record. */
export interface CmpCustodyTable {
  id: string;
  tenant_id: string;
  /** `hold` or `erasure` */
  record_kind: string;
  record_id: string;
  event: string;
  /** JSON array of the people involved (user ids / actors) */
  people: string;
  approval_id: string | null;
  ledger_seq: number | string;
  ledger_hash: string;
  created_at: string;
}

export interface ComplianceTables {
  cmp_holds: CmpHoldsTable;
  cmp_erasures: CmpErasuresTable;
  cmp_custody: CmpCustodyTable;
}

export const COMPLIANCE_TENANT_TABLES = ['cmp_holds', 'cmp_erasures', 'cmp_custody'] as const;
export const COMPLIANCE_GLOBAL_TABLES = [] as const;

/** Holds and erasures are never deleted; custody is append-only. */
export const COMPLIANCE_APP_ROLE_GRANTS = {
  cmp_holds: ['select', 'insert', 'update'],
  cmp_erasures: ['select', 'insert', 'update'],
  cmp_custody: ['select', 'insert'],
} as const satisfies Record<keyof ComplianceTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
