/**
 * Workspace references for other areas (legal holds…): a workspace of the tenant named by id,
 * display name or root path; resolved to its id by the shared resolver (src/contract/references.ts).
 */
import type { Transaction } from 'kysely';
import { isUuidText, type RefLookup } from '../../contract/references.js';
import type { Database } from '../../store/schema.js';

/** The lookup of the shared resolver for workspaces of `tenant`, inside `tx`. */
export function workspaceLookup(tx: Transaction<Database>, tenant: string): RefLookup {
  return {
    kind: 'workspace',
    forms: 'id, name or root path',
    exact: async (ref) => {
      const rows = await tx
        .selectFrom('workspaces')
        .select(['id', 'display_name', 'root_path'])
        .where('tenant_id', '=', tenant)
        .where((eb) => {
          const ors = [eb('display_name', '=', ref), eb('root_path', '=', ref)];
          if (isUuidText(ref)) ors.push(eb('id', '=', ref.toLowerCase()));
          return eb.or(ors);
        })
        .orderBy('id')
        .limit(50)
        .execute();
      return rows.map((r) => ({ id: r.id, label: r.display_name || r.root_path }));
    },
    names: async () => {
      const rows = await tx
        .selectFrom('workspaces')
        .select(['display_name', 'root_path'])
        .where('tenant_id', '=', tenant)
        .limit(10_000)
        .execute();
      return rows.flatMap((r) => [r.display_name, r.root_path]);
    },
  };
}
