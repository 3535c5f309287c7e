/** Event types the governance module emits on the bus. */
import { Type } from 'typebox';
import type { EventTypeDecl } from '../../events/event-types.js';

const Ref = Type.Object({ id: Type.String() }, { additionalProperties: true });
const decl = (type: string, permission: string, description: string): EventTypeDecl => ({
  type,
  source: '/svc/governance',
  permission,
  description,
  stability: 'beta',
  schema: Ref,
});

export const governanceEvents: EventTypeDecl[] = [
  decl(
    'approval.requested',
    'governance:approval:read',
    'An approval under dual control was requested (data: id, action, subject, plan_hash, quorum).',
  ),
  decl('approval.resolved', 'governance:approval:read', 'An approval was approved, rejected or cancelled (data: id, status).'),
  decl('pep.decided', 'governance:pep:read', 'The decision endpoint decided an agent tool call (data: id, decision, revision, tool_name).'),
  decl('policy.published', 'governance:policy:read', 'A signed policy revision was published and made active.'),
  decl('policy.rolled_back', 'governance:policy:read', 'An earlier policy revision was made active again.'),
  decl('killswitch.engaged', 'governance:pep:read', 'A kill switch was engaged: decisions in its scope are deny.'),
  decl('killswitch.released', 'governance:pep:read', 'A kill switch was released.'),
];
