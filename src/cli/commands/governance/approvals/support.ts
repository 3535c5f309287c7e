/** Shared pieces of `svc governance approvals …`: the approval shape and its renderings. */
import { fields, table } from '../../auth/support.js';

export const APPROVALS = '/v1/m/governance/approvals';

export type ApprovalView = {
  id: string;
  action: string;
  subject: string;
  params: Record<string, unknown>;
  plan_hash: string;
  quorum: number;
  approvals: number;
  status: string;
  reason: string;
  requested_by: string;
  expires_at: string;
  created_at: string;
};

export function approvalTable(items: ApprovalView[]): string {
  return table(items, [
    ['id', (a) => a.id],
    ['status', (a) => a.status],
    ['action', (a) => a.action],
    ['subject', (a) => a.subject],
    ['approvals', (a) => `${a.approvals}/${a.quorum}`],
    ['expires', (a) => a.expires_at],
  ]);
}

export function approvalFields(a: ApprovalView): string {
  return fields({ ...a, params: JSON.stringify(a.params) });
}
