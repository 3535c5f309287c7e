/**
 * User references for other areas (legal holds, erasures): a member of the tenant named by id or by
 * e-mail (matched on its normalised form); resolved to the user's id by the shared resolver
 * (src/contract/references.ts). Only members of the tenant are candidates: another tenant's people
 * are neither matched nor suggested.
 */
import type { Transaction } from 'kysely';
import { isUuidText, type RefLookup } from '../../contract/references.js';
import { normalizeEmail } from '../../auth/identity-store.js';
import type { Database } from '../../store/schema.js';

/** The lookup of the shared resolver for the members of `tenant`, inside `tx`. */
export function userLookup(tx: Transaction<Database>, tenant: string): RefLookup {
  const members = () =>
    tx.selectFrom('users').innerJoin('memberships', 'memberships.user_id', 'users.id').where('memberships.org_id', '=', tenant);
  return {
    kind: 'user',
    forms: 'id or e-mail',
    exact: async (ref) => {
      const rows = await members()
        .select(['users.id as id', 'users.email as email'])
        .where((eb) => {
          const ors = [eb('users.email', '=', normalizeEmail(ref))];
          if (isUuidText(ref)) ors.push(eb('users.id', '=', ref.toLowerCase()));
          return eb.or(ors);
        })
        .execute();
      return rows.map((r) => ({ id: r.id, label: r.email }));
    },
    names: async () => (await members().select('users.email as email').limit(10_000).execute()).map((r) => r.email),
  };
}
