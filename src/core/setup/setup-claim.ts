/**
 * The setup token of a deployment of replicas on one PostgreSQL database (docs/scale-out.md): one
 * valid token for the deployment. The first replica to start while no user exists records the
 * token's digest in `setup_tokens` (migration 27) and prints the token; the others print that
 * setup is pending and which replica printed it; any replica accepts the token. A restart of the
 * replica that printed it (same host and data directory) prints a new one and replaces the digest,
 * as a single node does. The row is deleted once setup completes.
 */
import { hostname } from 'node:os';
import type { Store } from '../../store/store-types.js';
import { digestsEqual, sha256Hex } from '../../auth/opaque-token.js';
import { nowTimestamp } from '../../ledger/time.js';

/** Who this replica is, in the row. */
export function replicaName(dataDir: string): string {
  return `${hostname()}:${dataDir}`;
}

/** Record `token` as the deployment's, unless another replica already did: then who and when. */
export async function claimSetupToken(
  store: Store,
  dataDir: string,
  token: string,
): Promise<{ mine: true } | { mine: false; by: string; at: string }> {
  const me = replicaName(dataDir);
  return store.transaction(async (tx) => {
    const row = { id: 1, digest: sha256Hex(token), minted_by: me, minted_at: nowTimestamp() };
    const won = await tx
      .insertInto('setup_tokens')
      .values(row)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (won !== undefined) return { mine: true as const };
    const cur = await tx
      .selectFrom('setup_tokens')
      .select(['minted_by', 'minted_at'])
      .where('id', '=', 1)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (cur.minted_by !== me) return { mine: false as const, by: cur.minted_by, at: cur.minted_at };
    await tx.updateTable('setup_tokens').set({ digest: row.digest, minted_at: row.minted_at }).where('id', '=', 1).execute();
    return { mine: true as const };
  });
}

/** True when `token` is the deployment's pending setup token (constant-time compare). */
export async function sharedSetupTokenMatches(store: Store, token: string): Promise<boolean> {
  const row = await store.transaction((tx) => tx.selectFrom('setup_tokens').select('digest').where('id', '=', 1).executeTakeFirst());
  if (row === undefined) return false;
  return digestsEqual(sha256Hex(token), row.digest) && /^svcst_[A-Z2-7]{52}$/.test(token);
}

/** Setup completed: the pending token is gone for every replica. */
export async function dropSetupToken(store: Store): Promise<void> {
  await store.transaction((tx) => tx.deleteFrom('setup_tokens').execute());
}
