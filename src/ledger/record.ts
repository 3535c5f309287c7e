/** Shapes of the audit ledger record (DECISIONS.md "Audit ledger"). Shared by ledger, store and encoders. */

/** The system chain's tenant id: user provisioning, logins, tokens, memberships. */
export const SYSTEM_TENANT = 'ffffffff-ffff-ffff-ffff-ffffffffffff';

/** What a caller hands to `append`: everything but the chain-assigned and cryptographic fields. */
export interface AuditDraft {
  /** `user:<id>`, `token:<id>`, `agent:<id>`, `system`… */
  actor: string;
  actor_kind: string;
  /** dotted verb, e.g. `agent.create`, `audit.read` */
  action: string;
  target_kind: string;
  /** `""` when the action has no target */
  target_id: string;
  /** JSON object; stored as canonical text (RFC 8785) and hashed as stored */
  meta?: Record<string, unknown>;
  /** optional SHA-256 (hex) of an external payload the record vouches for */
  payload_hash?: string | null;
  /** RFC 3339 UTC with 9 fractional digits; defaults to now */
  occurred_at?: string;
}

/** A durable, chained, signed ledger record as stored and served. */
export interface AuditRecord {
  id: string;
  tenant: string;
  seq: number;
  occurred_at: string;
  actor: string;
  actor_kind: string;
  action: string;
  target_kind: string;
  target_id: string;
  /** canonical JSON text of the meta object; null once erased */
  meta: string | null;
  /** hex of the 32-byte blind; null once erased (the commitment stays) */
  meta_blind: string | null;
  /** hex SHA-256 commitment over (blind, meta) */
  meta_commitment: string;
  /** hex SHA-256 or null (hashed as 32 zero bytes) */
  payload_hash: string | null;
  /** hex; 64 zeros at seq 1 */
  prev_hash: string;
  /** hex SHA-256 of the binary preimage */
  hash: string;
  /** base64 signature over the event-signature preimage */
  sig: string;
  key_id: string;
}
