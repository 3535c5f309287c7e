/**
 * One secrets key per deployment (docs/scale-out.md): every replica must open what any other
 * sealed, or a webhook subscription or secret created through one replica stops working the
 * moment that replica is gone ("sealed secret does not open with this key" on the others). The
 * first start records the key's id and a fixed text sealed with it (`secrets_key_check`,
 * migration 37); every later start opens that text with its own key and refuses to start (exit 2)
 * when it cannot, as it does for a TLS certificate or audit key other than the deployment's.
 *
 * A database sealed before the check existed has no row: the first start then looks at the sealed
 * values already stored (the secrets store and the subscriptions' secrets) and records its key only
 * when they were sealed with it.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { storeTimestamp } from '../store/timestamp.js';
import type { Store } from '../store/store-types.js';
import { SealError, type Sealer } from './sealing.js';

const CHECK_RECORD = 'svc.secrets_key_check';
const CHECK_TEXT = 'svc secrets key check';
/** Tenants looked at for a sealed value when the check is recorded for the first time (bounded: once per deployment). */
const SCAN_TENANTS = 1000;

/** The secrets key cannot open the deployment's sealed values: a configuration error (exit 2). */
export class SecretsKeyMismatchError extends Error {
  readonly code = 'secrets_key_mismatch';
}

export interface KeyCheckOptions {
  dataDir: string;
  /** SERVICE_SECRETS_KEY_FILE when set (named in the refusal) */
  keyFile: string | undefined;
}

/** Checks `sealer` against the deployment's recorded key, recording it on the first start. */
export async function checkSecretsKey(store: Store, sealer: Sealer, opts: KeyCheckOptions): Promise<void> {
  const from = opts.keyFile
    ? `SERVICE_SECRETS_KEY_FILE=${opts.keyFile}`
    : `${path.join(opts.dataDir, 'secrets.key')} (no SERVICE_SECRETS_KEY_FILE)`;
  const refuse = (theirs: string, what: string): never => {
    throw new SecretsKeyMismatchError(
      `this replica's secrets key (key id ${sealer.keyId}, from ${from}) does not open ${what} sealed with key id ${theirs}: ` +
        `give every replica the same SERVICE_SECRETS_KEY_FILE (docs/scale-out.md)`,
    );
  };
  let row = await readCheck(store);
  if (row === undefined) {
    const existing = await firstSealedKeyId(store);
    if (existing !== undefined && existing !== sealer.keyId) refuse(existing, 'the sealed values stored in the database,');
    const id = `${hostname()}:${path.resolve(opts.dataDir)}`;
    await store.transaction((tx) =>
      tx
        .insertInto('secrets_key_check')
        .values({
          id: 1,
          key_id: sealer.keyId,
          check_value: sealer.seal(CHECK_TEXT, CHECK_RECORD),
          recorded_by: id,
          recorded_at: storeTimestamp(),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute(),
    );
    // Two replicas starting together on a fresh database: the one whose row stayed decides.
    row = await readCheck(store);
    if (row === undefined) throw new Error('secrets_key_check: the row just written is not there');
  }
  try {
    if (sealer.open(row.check_value, CHECK_RECORD) === CHECK_TEXT) return;
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
  }
  refuse(row.key_id, `the deployment's sealed values (key recorded by ${row.recorded_by} at ${row.recorded_at}),`);
}

async function readCheck(store: Store) {
  return store.transaction((tx) => tx.selectFrom('secrets_key_check').selectAll().where('id', '=', 1).executeTakeFirst());
}

/** The key id of one sealed value already stored, if any: the secrets store first, then the tenants' subscriptions. */
async function firstSealedKeyId(store: Store): Promise<string | undefined> {
  const keyOf = (sealed: string | undefined): string | undefined => (sealed?.startsWith('sv1:') ? sealed.split(':')[1] : undefined);
  const secret = await store.transaction((tx) => tx.selectFrom('console_secrets').select('sealed').limit(1).executeTakeFirst());
  if (keyOf(secret?.sealed)) return keyOf(secret?.sealed);
  const tenants = await store.transaction((tx) => tx.selectFrom('tenants').select('id').orderBy('id').limit(SCAN_TENANTS).execute());
  for (const { id } of tenants) {
    const sub = await store.withTenant(id, (tx) =>
      tx.selectFrom('event_subscriptions').select('secret_sealed').where('tenant_id', '=', id).limit(1).executeTakeFirst(),
    );
    if (keyOf(sub?.secret_sealed)) return keyOf(sub?.secret_sealed);
  }
  return undefined;
}
