/**
 * The legal hold as a veto: guards on other owners' deletes and erasures (src/contract/record-hooks.ts).
 * Every delete path of a covered kind runs `hooks.run('delete', …)` before it changes anything:
 *  - `agent`: `DELETE /v1/agents/{id}` (the agent);
 *  - `token`: `DELETE /v1/tokens/{id}` (the token, and every token of a held user);
 *  - `event`: event-log retention (src/events/event-log.ts), per expired subject `kind/id`;
 * and the erasure of ledger meta runs `hooks.run('erase', { kind: 'audit_meta' })` per subject ref.
 * Users and workspaces have no delete path today (users are disabled, never deleted).
 * Holds name their subject by id (subject-refs.ts resolves names, external ids and e-mails when the
 * hold is placed), so every guard compares ids.
 */
import type { RecordHookDecl } from '../../contract/record-hooks.js';
import { coveringHolds, guardAgainstHolds } from './service.js';
import { ApiError } from '../../contract/errors.js';

export const complianceHooks: RecordHookDecl[] = [
  {
    action: 'delete', kind: 'agent', phase: 'guard', name: 'compliance.legal-hold-agent-delete',
    run: (ctx) => {
      const names = [String(ctx.record['name'] ?? ''), String(ctx.record['external_id'] ?? '')];
      return guardAgainstHolds(ctx.tx, ctx.tenant, 'agent', ctx.id, 'deleted', names);
    },
  },
  {
    action: 'delete', kind: 'token', phase: 'guard', name: 'compliance.legal-hold-token-delete',
    run: async (ctx) => {
      await guardAgainstHolds(ctx.tx, ctx.tenant, 'token', ctx.id, 'revoked');
      const owner = ctx.record['user_id'];
      if (typeof owner === 'string') await guardAgainstHolds(ctx.tx, ctx.tenant, 'user', owner, `stripped of its API key ${ctx.id}`);
    },
  },
  {
    // Event-log retention: the subject of events is `kind/id` (`agent/…`, `legal_hold/…`).
    action: 'delete', kind: 'event', phase: 'guard', name: 'compliance.legal-hold-event-retention',
    run: async (ctx) => {
      const slash = ctx.id.indexOf('/');
      const kind = slash > 0 ? ctx.id.slice(0, slash) : ctx.id;
      const ref = slash > 0 ? ctx.id.slice(slash + 1) : '';
      await guardAgainstHolds(ctx.tx, ctx.tenant, kind, ref, 'pruned from the event log');
    },
  },
  {
    action: 'erase', kind: 'audit_meta', phase: 'guard', name: 'compliance.legal-hold-ledger-erasure',
    run: async (ctx) => {
      const kind = String(ctx.record['subject_kind'] ?? '');
      const classes = Array.isArray(ctx.record['data_classes']) ? (ctx.record['data_classes'] as string[]) : [];
      const holds = await coveringHolds(ctx.tx, ctx.tenant, { kind, refs: [ctx.id], dataClasses: classes });
      if (holds.length > 0)
        throw new ApiError(
          'legal_hold',
          `a legal hold covers ${kind} ${ctx.id}; its ledger meta cannot be erased (hold ${holds.join(', ')})`,
        );
    },
  },
];
