/** Shared pieces of `svc compliance …`: paths and renderings of holds and erasure requests. */
import { fields, table } from '../auth/support.js';

export const HOLDS = '/v1/m/compliance/holds';
export const ERASURE = '/v1/m/compliance/erasure';

export type HoldView = {
  id: string;
  scope: string;
  subject_kind: string;
  subject_ref: string;
  data_class: string;
  matter: string;
  reason: string;
  status: string;
  created_at: string;
  [k: string]: unknown;
};
export type ErasureView = {
  id: string;
  case_ref: string;
  subject_kind: string;
  subject_ref: string;
  aliases: string[];
  data_classes: string[];
  status: string;
  created_at: string;
  [k: string]: unknown;
};
export type Pending = { status: 'pending_approval'; approval_id: string };

const covered = (h: HoldView): string =>
  h.scope === 'subject' ? `${h.subject_kind}/${h.subject_ref}` : h.scope === 'data_class' ? `class:${h.data_class}` : 'tenant';

export function holdTable(items: HoldView[]): string {
  return table(items, [
    ['id', (h) => h.id],
    ['status', (h) => h.status],
    ['covers', covered],
    ['matter', (h) => h.matter],
    ['placed', (h) => h.created_at],
  ]);
}

export function holdFields(h: HoldView): string {
  return fields(h);
}

export function erasureTable(items: ErasureView[]): string {
  return table(items, [
    ['id', (e) => e.id],
    ['status', (e) => e.status],
    ['case', (e) => e.case_ref],
    ['subject', (e) => `${e.subject_kind}/${e.subject_ref}`],
    ['registered', (e) => e.created_at],
  ]);
}

export function erasureFields(e: ErasureView): string {
  return fields({ ...e, aliases: e.aliases.join(','), data_classes: e.data_classes.join(',') });
}

/** Text of a 202: who must approve next. */
export function pendingText(p: Pending): string {
  return (
    `pending_approval: approval ${p.approval_id} needs its quorum (svc governance approvals approve ${p.approval_id}); then run again ` +
    `with --approval ${p.approval_id}`
  );
}

/** One step of a hold's or an erasure request's custody chain, with its ledger record. */
export type Custody = {
  event: string;
  people: string[];
  approval_id: string | null;
  ledger_seq: number;
  ledger_hash: string;
  created_at: string;
};

export function custodyTable(items: Custody[]): string {
  return table(items, [
    ['event', (e) => e.event],
    ['seq', (e) => e.ledger_seq],
    ['hash', (e) => e.ledger_hash.slice(0, 16)],
    ['people', (e) => e.people.join(',')],
    ['at', (e) => e.created_at],
  ]);
}
