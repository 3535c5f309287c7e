/** The legal hold as a veto: guards on other modules' deletes and erasures (src/contract/record-hooks.ts). */
import type { RecordHookDecl } from '../../contract/record-hooks.js';
import { guardAgainstHolds } from './service.js';

/** The record kinds whose delete route runs the hooks today; add a kind here when its owner runs them. */
const DELETE_KINDS = ['agent'] as const;

export const complianceHooks: RecordHookDecl[] = [
  ...DELETE_KINDS.map((kind): RecordHookDecl => ({
    action: 'delete', kind, phase: 'guard', name: `compliance.legal-hold-${kind}-delete`,
    run: (ctx) => guardAgainstHolds(ctx.tx, ctx.tenant, ctx.kind, ctx.id, 'deleted'),
  })),
];
