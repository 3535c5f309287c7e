/** Event types the capabilities module emits on the bus. */
import Type from 'typebox';
import type { EventTypeDecl } from '../../events/event-types.js';

const decl = (type: string, description: string): EventTypeDecl => ({
  type,
  source: '/svc/capabilities',
  permission: 'capabilities:config:read',
  description,
  stability: 'beta',
  schema: Type.Object({ id: Type.String() }, { additionalProperties: true }),
});

export const capabilitiesEvents: EventTypeDecl[] = [
  decl('capability_config.created', 'An MCP server or tool configuration was created (data: id, name, kind, revision).'),
  decl('capability_config.replaced', 'A configuration was replaced by a new revision (data: id, name, kind, revision).'),
  decl('capability_config.deleted', 'A configuration was deleted; its revisions stay (data: id, name, kind, revision).'),
];
