/** Event types of the core areas (agents, workspaces, tokens, users) and the access map's ingest. */
import { Type } from 'typebox';
import type { EventTypeDecl } from './event-types.js';

const Ref = Type.Object({ id: Type.String() }, { additionalProperties: true });

const decl = (type: string, source: string, permission: string, description: string): EventTypeDecl => ({
  type,
  source,
  permission,
  description,
  stability: 'beta',
  schema: Ref,
});
export const coreEvents: EventTypeDecl[] = [
  decl('agent.created', '/svc/agents', 'agent:read', 'An agent was registered.'),
  decl('agent.updated', '/svc/agents', 'agent:read', 'An agent was changed (data: id, version, changed fields).'),
  decl('agent.deleted', '/svc/agents', 'agent:read', 'An agent was deleted.'),
  decl('workspace.created', '/svc/workspaces', 'workspace:read', 'A governed workspace was created.'),
  decl('workspace.updated', '/svc/workspaces', 'workspace:read', 'A governed workspace was changed.'),
  decl('token.issued', '/svc/tokens', 'user:read', 'An API key was issued (never its secret).'),
  decl('token.rotated', '/svc/tokens', 'user:read', 'An API key was rotated.'),
  decl('token.revoked', '/svc/tokens', 'user:read', 'An API key was revoked.'),
  decl('user.created', '/svc/users', 'user:read', 'A user was provisioned.'),
  decl('user.disabled', '/svc/users', 'user:read', 'A user was disabled.'),
  decl('user.enabled', '/svc/users', 'user:read', 'A user was enabled.'),
  decl('edge.observed', '/svc/accessmap', 'accessmap:graph:read', 'A batch of access observations was stored (data: count, new edges).'),
];
