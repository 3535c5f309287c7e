/** The kit module's routes under `/v1/m/kit/`: one write (audited, emits an event) and one read. */
import Type from 'typebox';
import { Text, Timestamp, Uuid } from '../../../src/contract/common.js';
import { route, type AnyRoute } from '../../../src/contract/route.js';
import { tenantOf } from '../../../src/http/request-scope.js';
import { reply } from '../../../src/http/reply.js';
import { addNote, listNotes } from './service.js';

const common = { stability: 'beta' as const, tags: ['kit'] };
const Note = Type.Object({ id: Uuid, text: Type.String(), created_at: Timestamp }, { additionalProperties: false });
const NoteBody = Type.Object({ text: Text({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const kitRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: '/v1/m/kit/notes',
    operationId: 'kitAddNote',
    summary: 'Add a note',
    permission: 'kit:note:write',
    audit: 'kit.note.create',
    body: NoteBody,
    response: Note,
    status: 201,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const note = await ctx.services.events.withEvents((emit) => addNote(ctx.services.store, tenant, ctx.body.text, emit));
      await ctx.audit({ kind: 'kit_note', id: note.id });
      return reply.json(note, 201);
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/m/kit/notes',
    operationId: 'kitListNotes',
    summary: "The tenant's notes",
    permission: 'kit:note:read',
    response: Type.Object({ items: Type.Array(Note) }, { additionalProperties: false }),
    handler: async (ctx) => ({ items: await listNotes(ctx.services.store, tenantOf(ctx)) }),
  }),
];
