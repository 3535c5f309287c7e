/**
 * Subjects of holds and erasures named by reference (DECISIONS.md Wave 3 "References are resolved
 * when written"): for a kind that names a record svc keeps, the reference (an agent's name or
 * external id, a user's e-mail, a workspace's name or root path) is resolved to the record's id by
 * that record's own area, and the id is what is stored and matched by the guards. Other kinds (a
 * data subject svc has no record of: `customer`, `person`…) are stored as given and matched exactly.
 */
import type { Transaction } from 'kysely';
import { resolveReference, type RefLookup } from '../../contract/references.js';
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

/** The id `ref` denotes for a resolved kind (404 with close names, 409 `ambiguous`); `ref` itself for any other kind. */
export async function resolveSubject(tx: Transaction<Database>, tenant: string, kind: string, ref: string): Promise<string> {
  const lookup = LOOKUPS[kind];
  return lookup ? (await resolveReference(lookup(tx, tenant), ref)).id : ref;
}
