/** Event types the claude-policy module emits on the bus. */
import Type from 'typebox';
import type { EventTypeDecl } from '../../events/event-types.js';

const decl = (type: string, permission: string, description: string): EventTypeDecl => ({
  type,
  source: '/svc/claude-policy',
  permission,
  description,
  stability: 'beta',
  schema: Type.Object({ id: Type.String() }, { additionalProperties: true }),
});

export const claudePolicyEvents: EventTypeDecl[] = [
  decl(
    'claude_policy.published',
    'claude-policy:policy:read',
    'A managed agent settings surface was published as a new signed revision (data: id, surface, revision, sha256).',
  ),
  decl(
    'claude_policy.checked_in',
    'claude-policy:policy:read',
    'A host reported the artifact it holds (data: id, host, surface, sha256, verified, current, revision).',
  ),
];
