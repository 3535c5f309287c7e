/** Event types the compliance module emits on the bus. */
import { Type } from 'typebox';
import type { EventTypeDecl } from '../../events/event-types.js';

const Ref = Type.Object({ id: Type.String() }, { additionalProperties: true });
const decl = (type: string, permission: string, description: string): EventTypeDecl => ({
  type,
  source: '/svc/compliance',
  permission,
  description,
  stability: 'beta',
  schema: Ref,
});

export const complianceEvents: EventTypeDecl[] = [
  decl(
    'hold.placed',
    'compliance:hold:read',
    'A legal hold was placed and is active (data: id, scope, subject_kind, subject_ref, data_class, matter).',
  ),
  decl('hold.released', 'compliance:hold:read', 'A legal hold was released under dual control (data: id, approval_id, released_by).'),
  decl(
    'erasure.completed',
    'compliance:erasure:read',
    'An erasure request was executed under dual control (data: id, case_ref, approval_id).',
  ),
];
