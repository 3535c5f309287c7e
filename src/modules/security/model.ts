/**
 * A finding as the security module stores and serves it, and the one natural key findings are
 * deduplicated by: rule, subject, artifact and region. The same problem reported twice (by a
 * collector re-sending it, an integration, or a detector's next run) is the same finding, whose
 * occurrence count and last-seen time move; its SARIF fingerprint derives from this key only.
 */
import { createHash } from 'node:crypto';

export const FINDING_SEVERITIES = ['info', 'low', 'medium', 'high', 'critical', 'undetermined'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];
export const FINDING_STATUSES = ['open', 'acknowledged', 'resolved', 'suppressed'] as const;
export type FindingStatus = (typeof FINDING_STATUSES)[number];
export const FINDING_SOURCES = ['collector', 'integration', 'detector'] as const;
export type FindingSource = (typeof FINDING_SOURCES)[number];

/** A link to a ledger record the finding rests on. */
export interface LedgerRef {
  tenant: string;
  seq: number;
  action: string;
}

/** A finding on the wire. */
export interface Finding {
  id: string;
  tenant_id: string;
  rule_id: string;
  kind: string;
  severity: string;
  source: FindingSource;
  subject_kind: string;
  subject_ref: string;
  message: string;
  artifact_uri: string | null;
  region: { start_line: number; end_line?: number } | null;
  tags: string[];
  first_seen: string;
  last_seen: string;
  occurrences: number;
  status: FindingStatus;
  status_by: string;
  status_note: string;
  status_at: string;
  ledger_refs: LedgerRef[];
  /** `primaryLocationLineHash` of its SARIF result */
  fingerprint: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/** What a reporter says about one finding (any source). */
export interface FindingReport {
  rule_id: string;
  kind?: string;
  severity: FindingSeverity;
  subject_kind: string;
  subject_ref: string;
  message: string;
  artifact_uri?: string;
  region?: { start_line: number; end_line?: number };
  tags?: string[];
  /** when it was seen (default: now) */
  observed_at?: string;
  evidence?: Record<string, unknown>;
  ledger_refs?: LedgerRef[];
  /** how many times this report stands for (a collector batch may repeat an item) */
  count?: number;
}

function lp(h: ReturnType<typeof createHash>, s: string): void {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  h.update(len).update(b);
}

/** hex SHA-256 of the length-prefixed natural key (no separator can make two keys collide). */
export function naturalKey(r: Pick<FindingReport, 'rule_id' | 'subject_kind' | 'subject_ref' | 'artifact_uri' | 'region'>): string {
  const h = createHash('sha256');
  lp(h, 'svc.finding.v1');
  lp(h, r.rule_id);
  lp(h, r.subject_kind);
  lp(h, r.subject_ref);
  lp(h, r.artifact_uri ?? '');
  lp(h, r.region ? String(r.region.start_line) : '');
  return h.digest('hex');
}
