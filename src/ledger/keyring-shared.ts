/**
 * The keyring of a deployment of several replicas on one PostgreSQL database (docs/scale-out.md):
 * its public half (keys, seq ranges, rotation history: what keyring.json holds) lives in the row
 * `audit_keyring`, so every replica publishes the same `GET /v1/audit/pubkey` and verifies with the
 * same ranges; the private key comes from the key file every replica is given. A replica signs only
 * with the key the row names active:
 *  - at start (Keyring.open) a key that is not the active one is refused, with the reason;
 *  - at every ledger commit (`guardCommit`, inside the chain's transaction) the row is read under a
 *    shared advisory lock; rotation takes it exclusively, so no commit signed by the old key lands
 *    after the rotation recorded the old key's last seq of each chain.
 */
import { sql, type Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/store-types.js';
import { nowTimestamp } from './time.js';

/** Advisory lock of the keyring: exclusive for first start and rotation, shared by each ledger commit. */
const KEYRING_LOCK = 'svc.audit.keyring';

/** The stored keyring document (keyring.json's shape, private key file names left out). */
export interface SharedKeyringDoc {
  version: 1;
  active: string;
  keys: Array<{
    key_id: string;
    algorithm: string;
    public_key: string;
    created_at: string;
    retired_at?: string;
    ranges: Record<string, { first_seq: number; last_seq?: number }>;
  }>;
}

/** True when the store is shared by several processes and the keyring lives in it (Postgres). */
export function keyringIsShared(store: Store | undefined): store is Store {
  return store !== undefined && store.capabilities.supportsAdvisoryLocks;
}

/** Runs `fn` in a transaction holding the keyring lock exclusively (first start, rotation). */
export function withKeyringLock<T>(store: Store, fn: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  return store.transaction(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${KEYRING_LOCK}))`.execute(tx);
    return fn(tx);
  });
}

/** The stored document, or null before the first replica started. */
export async function readSharedKeyring(tx: Transaction<Database>): Promise<SharedKeyringDoc | null> {
  const row = await tx.selectFrom('audit_keyring').select(['state']).where('id', '=', 1).executeTakeFirst();
  return row === undefined ? null : (JSON.parse(row.state) as SharedKeyringDoc);
}

/** Stores the document (private key file names stripped). */
export async function writeSharedKeyring(tx: Transaction<Database>, doc: SharedKeyringDoc): Promise<void> {
  const clean: SharedKeyringDoc = {
    version: 1,
    active: doc.active,
    keys: doc.keys.map(({ key_id, algorithm, public_key, created_at, retired_at, ranges }) => ({
      key_id,
      algorithm,
      public_key,
      created_at,
      ...(retired_at === undefined ? {} : { retired_at }),
      ranges,
    })),
  };
  const row = { id: 1, active_key_id: doc.active, state: JSON.stringify(clean), updated_at: nowTimestamp() };
  await tx
    .insertInto('audit_keyring')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ active_key_id: row.active_key_id, state: row.state, updated_at: row.updated_at }))
    .execute();
}

/** Thrown when this replica's key is not the deployment's active key. */
export class RetiredKeyError extends Error {
  override readonly name = 'RetiredKeyError';
  readonly status = 503;
  readonly code = 'unavailable';
}

/**
 * Inside a ledger commit's transaction: waits out a rotation in progress (shared lock) and refuses
 * when the active key is no longer `keyId`.
 */
export async function guardCommit(tx: Transaction<Database>, keyId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock_shared(hashtext(${KEYRING_LOCK}))`.execute(tx);
  const row = await tx.selectFrom('audit_keyring').select('active_key_id').where('id', '=', 1).executeTakeFirst();
  if (row !== undefined && row.active_key_id !== keyId) {
    throw new RetiredKeyError(
      `this replica's audit key ${keyId} is no longer the deployment's active key (${row.active_key_id}): it refuses to sign; ` +
        `restart it with the active key file (docs/scale-out.md "Rotation")`,
    );
  }
}
