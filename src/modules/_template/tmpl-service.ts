/** TEMPLATE: the domain functions; routes and other modules (through index.ts) call these, never the tables. */
import type { Emit } from '../../events/bus.js';
import { newId } from '../../store/ids.js';
import { ownTables } from '../../store/module-storage.js';
import type { Store } from '../../store/store.js';
import { storeTimestamp } from '../../store/timestamp.js';
import type { TmplItemsTable, TmplTables } from './storage.js';

export type Item = Omit<TmplItemsTable, 'tenant_id'>;

/** Creates an item; its event is recorded in the same transaction, so a rollback never announces it. */
export async function createItem(store: Store, tenant: string, name: string, emit: Emit): Promise<Item> {
  const item = { id: newId(), name, created_at: storeTimestamp() };
  await store.withTenant(tenant, async (tx) => {
    await ownTables<TmplTables>(tx).insertInto('tmpl_items').values({ ...item, tenant_id: tenant }).execute();
    await emit({ type: 'tmpl_item.created', tenant, subject: `tmpl_item/${item.id}`, data: { id: item.id } }, tx);
  });
  return item;
}

/** The tenant's items in id order (the WHERE matters on SQLite, which has no RLS). */
export async function listItems(store: Store, tenant: string): Promise<Item[]> {
  return store.withTenant(tenant, (tx) =>
    ownTables<TmplTables>(tx)
      .selectFrom('tmpl_items')
      .select(['id', 'name', 'created_at'])
      .where('tenant_id', '=', tenant)
      .orderBy('id')
      .execute(),
  );
}
