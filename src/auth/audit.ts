/**
 * Audit drafts of identity events (DECISIONS.md "Audit ledger"): actor `user:<id>` or
 * `token:<id>` (or `system`), dotted actions (`auth.login`, `token.create`…), target kind and id.
 * Identity events go to the system chain, tenant events to the tenant's chain; docs/auth.md lists them.
 */
import type { AuditDraft } from '../ledger/record.js';
import type { Principal } from './principal.js';

/** A draft whose actor is the authenticated caller. */
export function draftBy(
  principal: Principal,
  action: string,
  targetKind: string,
  targetId: string,
  meta?: Record<string, unknown>,
): AuditDraft {
  return {
    actor: principal.actor,
    actor_kind: principal.actorKind,
    action,
    target_kind: targetKind,
    target_id: targetId,
    ...(meta ? { meta } : {}),
  };
}

/** A draft acted by a user who is not (yet) authenticated by a token, e.g. at login or setup. */
export function draftByUser(
  userId: string | undefined,
  action: string,
  targetKind: string,
  targetId: string,
  meta?: Record<string, unknown>,
): AuditDraft {
  return {
    actor: userId ? `user:${userId}` : 'anonymous',
    actor_kind: userId ? 'user' : 'anonymous',
    action,
    target_kind: targetKind,
    target_id: targetId,
    ...(meta ? { meta } : {}),
  };
}
