/**
 * Checkpoints are ordinary chained records (DECISIONS.md "Audit ledger") with action `audit.checkpoint`,
 * actor `system`, target `audit.chain`/"" and this meta (canonical JSON, under the blinded commitment):
 *   { "attested_seq": N, "head_hash": "<hex hash of record N>",
 *     "checkpoint_sig": "<base64 sig over lp("svc.audit.checkpoint.v1") ‖ lp(tenant) ‖ u64be(N) ‖ lp(head_hash[32])>",
 *     "key_id": "<signing key id>" }
 * The sealer always attests the record just before the checkpoint (N = seq - 1, head_hash = prev_hash),
 * so a checkpoint also pins the chain head at the moment it was written; verifiers accept any N < seq
 * whose record they hold.
 */
import type { AuditDraft } from './record.js';
import { isHex32 } from './preimage.js';

/** The action of checkpoint records. */
export const CHECKPOINT_ACTION = 'audit.checkpoint';

/** The meta of a checkpoint record. */
export interface CheckpointMeta {
  attested_seq: number;
  head_hash: string;
  checkpoint_sig: string;
  key_id: string;
}

/** A draft that the sealer turns into a checkpoint of the chain head (its meta is computed while sealing). */
export function checkpointDraft(occurredAt?: string): AuditDraft {
  const d: AuditDraft = { actor: 'system', actor_kind: 'system', action: CHECKPOINT_ACTION, target_kind: 'audit.chain', target_id: '' };
  if (occurredAt !== undefined) d.occurred_at = occurredAt;
  return d;
}

/** Parse stored checkpoint meta text; null when it is missing, erased or malformed. */
export function parseCheckpointMeta(text: string | null): CheckpointMeta | null {
  if (text === null) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const { attested_seq, head_hash, checkpoint_sig, key_id } = o;
  if (typeof attested_seq !== 'number' || !Number.isSafeInteger(attested_seq) || attested_seq < 1) return null;
  if (typeof head_hash !== 'string' || !isHex32(head_hash)) return null;
  if (typeof checkpoint_sig !== 'string' || typeof key_id !== 'string') return null;
  return { attested_seq, head_hash, checkpoint_sig, key_id };
}
