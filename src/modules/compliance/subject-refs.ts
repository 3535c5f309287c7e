/**
 * Subjects of holds and erasures named by reference (DECISIONS.md Wave 3 "References are resolved
 * when written"): for a kind that names a record svc keeps, the reference (an agent's name or
 * external id, a user's e-mail, a workspace's name or root path) is resolved to the record's id by
 * that record's own area, and the id is what is stored and matched by the guards. Other kinds (a
 * data subject svc has no record of: `customer`, `person`…) are stored as given and matched exactly.
 */
import type { Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import { isUuidText, resolveReference, type RefLookup } from '../../contract/references.js';
import { grantIn, type Principal } from '../../auth/principal.js';
import { roleAtLeast } from '../../auth/roles.js';
import { agentLookup } from '../../core/agents/agent-refs.js';
import { tokenLookup } from '../../core/tokens/token-refs.js';
import { userLookup } from '../../core/users/user-refs.js';
import { workspaceLookup } from '../../core/workspaces/workspace-refs.js';
import type { Database } from '../../store/schema.js';

const LOOKUPS: Readonly<Record<string, (tx: Transaction<Database>, tenant: string) => RefLookup>> = {
  agent: agentLookup,
  token: tokenLookup,
  user: userLookup,
  workspace: workspaceLookup,
};

/** The kinds whose references are resolved to ids. */
export const RESOLVED_SUBJECT_KINDS = Object.keys(LOOKUPS);

/** Kinds whose names (e-mails, key names) only admins may read: resolving them answers with those names. */
const PEOPLE = new Set(['user', 'token']);

/** Whether `p` may name people and keys by e-mail and name in `tenant` (and read the close names of a miss): admin or above. */
export function mayNamePeople(p: Principal | undefined, tenant: string): boolean {
  const g = p ? grantIn(p, tenant) : undefined;
  return p?.superadmin === true || (g !== undefined && roleAtLeast(g.role, 'admin'));
}

/**
 * The id `ref` denotes for a resolved kind (404 with close names, 409 `ambiguous`); `ref` itself for
 * any other kind. Without `people` (a viewer's hold check) a user or an API key is taken by id only,
 * unchecked, so the answer reveals no e-mail, key name or membership; any other form is 400.
 */
export async function resolveSubject(
  tx: Transaction<Database>,
  tenant: string,
  kind: string,
  ref: string,
  people = true,
): Promise<string> {
  const lookup = LOOKUPS[kind];
  if (!lookup) return ref;
  if (!people && PEOPLE.has(kind)) {
    if (isUuidText(ref)) return ref.toLowerCase();
    throw errors.badRequest(`naming a ${kind} otherwise than by id needs the admin role; give its id`);
  }
  return (await resolveReference(lookup(tx, tenant), ref)).id;
}
