/**
 * Signing-key rotation (issue 4 item 2; docs/audit-verification.md "Rotation"). Offline by design:
 * `svc keys rotate` runs on the data directory with `svc serve` stopped, because a running server
 * keeps the active key in memory (and in its worker pool) and would go on signing with the retired
 * key, which verifiers then reject as `sig-invalid` past its `last_seq`.
 *
 * Steps: read every chain's head (each tenant of the tenants table, plus the system chain), mint the
 * new key and retire the old one at each head (keyring.json is written atomically), then append an
 * `audit.key.rotate` record, signed by the new key, to every chain that has records, carrying the
 * old and new key ids and the bound. A crash between the two steps leaves a valid keyring whose
 * chains simply lack the rotate record; the seq ranges alone already bind the keys.
 */
import type { Store } from '../store/store-types.js';
import type { Keyring } from './keyring.js';
import { readHead } from './ledger-store.js';
import { LedgerPipeline } from './pipeline.js';
import { SYSTEM_TENANT } from './record.js';
import type { SignatureAlgorithm, Signer } from './signers.js';
import { guardCommit } from './keyring-shared.js';

/** The action of the record each chain gets at a rotation. */
export const KEY_ROTATE_ACTION = 'audit.key.rotate';

/** What a rotation did. */
export interface RotationResult {
  old_key_id: string;
  new_key_id: string;
  algorithm: SignatureAlgorithm;
  /** per chain: the old key's last seq and the seq of the rotate record */
  chains: Array<{ tenant: string; last_seq_old_key: number; rotate_seq: number }>;
}

/** Head seq of every chain that has records: each tenant of the tenants table and the system chain. */
export async function chainHeads(store: Store): Promise<Map<string, number>> {
  const rows = await store.transaction((tx) => tx.selectFrom('tenants').select('id').execute());
  const heads = new Map<string, number>();
  for (const tenant of [SYSTEM_TENANT, ...rows.map((r) => r.id)]) {
    const head = await store.withTenant(tenant, (tx) => readHead(tx, tenant));
    if (head !== null) heads.set(tenant, head.seq);
  }
  return heads;
}

/**
 * Rotate the ledger's signing key. A keyring in the data directory (SQLite): the server must be
 * stopped (see the file comment). A keyring shared by replicas (Postgres, keyring-shared.ts): one
 * operation for the deployment, online: the heads are read and the new key recorded under the
 * keyring lock, so no replica commits in between, and a replica still holding the old key refuses
 * to sign from then on. `keyPem`: the new private key (the file the replicas will be given);
 * default a minted key in the data directory.
 */
export async function rotateSigningKey(
  store: Store,
  keyring: Keyring,
  algorithm?: SignatureAlgorithm,
  keyPem?: string,
): Promise<RotationResult> {
  const oldKeyId = keyring.active.keyId;
  let heads: ReadonlyMap<string, number>;
  let next: Signer;
  if (keyring.isShared) {
    ({ signer: next, heads } = await keyring.rotateShared(() => chainHeads(store), algorithm ?? keyring.active.algorithm, keyPem));
  } else {
    if (keyPem !== undefined) throw new TypeError('a supplied key is rotated in with SERVICE_AUDIT_KEY_FILE on a single node');
    heads = await chainHeads(store);
    next = await keyring.rotate(heads, algorithm ?? keyring.active.algorithm);
  }
  const pipeline = new LedgerPipeline({
    store,
    signer: () => keyring.active,
    pool: null,
    ...(keyring.isShared ? { commitGuard: (tx) => guardCommit(tx, keyring.active.keyId) } : {}),
  });
  const chains: RotationResult['chains'] = [];
  try {
    for (const [tenant, bound] of heads) {
      const rec = await pipeline.append(tenant, {
        actor: 'system',
        actor_kind: 'system',
        action: KEY_ROTATE_ACTION,
        target_kind: 'audit.key',
        target_id: next.keyId,
        meta: { old_key_id: oldKeyId, new_key_id: next.keyId, algorithm: next.algorithm, old_key_last_seq: bound },
      });
      chains.push({ tenant, last_seq_old_key: bound, rotate_seq: rec.seq });
    }
  } finally {
    await pipeline.close();
  }
  return { old_key_id: oldKeyId, new_key_id: next.keyId, algorithm: next.algorithm, chains };
}
