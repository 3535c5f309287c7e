/**
 * API key references for other areas (legal holds, kill switches by credential): a key that
 * reaches the tenant (bound to it, or unbound and owned by one of its members), named by id or by
 * its name; resolved to the key's id by the shared resolver (src/contract/references.ts).
 */
import type { Transaction } from 'kysely';
import { isUuidText, type RefLookup } from '../../contract/references.js';
import type { Database } from '../../store/schema.js';

/** The lookup of the shared resolver for the API keys reaching `tenant`, inside `tx`. */
export function tokenLookup(tx: Transaction<Database>, tenant: string): RefLookup {
  const reaching = () =>
    tx
      .selectFrom('api_tokens')
      .where((eb) =>
        eb.or([
          eb('org_id', '=', tenant),
          eb.and([
            eb('org_id', 'is', null),
            eb('user_id', 'in', eb.selectFrom('memberships').select('user_id').where('org_id', '=', tenant)),
          ]),
        ]),
      );
  return {
    kind: 'API key',
    forms: 'id or name',
    exact: async (ref) => {
      const rows = await reaching()
        .select(['id', 'name'])
        .where((eb) => (isUuidText(ref) ? eb.or([eb('name', '=', ref), eb('id', '=', ref.toLowerCase())]) : eb('name', '=', ref)))
        .orderBy('id')
        .limit(50)
        .execute();
      return rows.map((r) => ({ id: r.id, label: r.name }));
    },
    names: async () => (await reaching().select('name').limit(10_000).execute()).map((r) => r.name),
  };
}
