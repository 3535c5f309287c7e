/** TEMPLATE: the event types the module emits (`<noun>.<past verb>`), with the permission a receiver needs. */
import Type from 'typebox';
import type { EventTypeDecl } from '../../events/event-types.js';

export const tmplEvents: EventTypeDecl[] = [
  {
    type: 'tmpl_item.created',
    source: '/svc/tmpl',
    description: 'An item was created.',
    permission: 'tmpl:item:read',
    stability: 'beta',
    schema: Type.Object({ id: Type.String() }),
  },
];
