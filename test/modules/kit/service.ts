/** The kit module's domain functions: a note is written with its event, in one transaction. */
import type { Emit } from '../../../src/events/bus.js';
import { newId } from '../../../src/store/ids.js';
import { ownTables } from '../../../src/store/module-storage.js';
import type { Store } from '../../../src/store/store.js';
import { storeTimestamp } from '../../../src/store/timestamp.js';
import type { KitNotesTable, KitTables } from './storage.js';

export type Note = Omit<KitNotesTable, 'tenant_id'>;

/** Inserts a note and records `kit.note_added` in the same transaction (the durable event log). */
export async function addNote(store: Store, tenant: string, text: string, emit: Emit): Promise<Note> {
  const note = { id: newId(), text, created_at: storeTimestamp() };
  await store.withTenant(tenant, async (tx) => {
    await ownTables<KitTables>(tx).insertInto('kit_notes').values({ ...note, tenant_id: tenant }).execute();
    await emit({ type: 'kit.note_added', tenant, subject: `kit_note/${note.id}`, data: { id: note.id } }, tx);
  });
  return note;
}

/** The tenant's notes in id order. */
export async function listNotes(store: Store, tenant: string): Promise<Note[]> {
  return store.withTenant(tenant, (tx) =>
    ownTables<KitTables>(tx)
      .selectFrom('kit_notes')
      .select(['id', 'text', 'created_at'])
      .where('tenant_id', '=', tenant)
      .orderBy('id')
      .execute(),
  );
}
