/**
 * The sealed secrets store (DECISIONS.md "Sealed secrets"): a named value sealed with the server's
 * key (src/secrets/sealing.ts, the record id as associated data). Listings show name, hint and who
 * references it, never the value. Other modules hold a reference (`secret:<name>` or the bare name)
 * and call `resolveSecret` each time they need the value, so a deleted secret fails closed at once:
 * `SecretUnavailableError`, never an empty or cached value.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { newId } from '../../store/ids.js';
import { nowTimestamp } from '../../ledger/time.js';
import { secretHint, type Sealer } from '../../secrets/sealing.js';

export const SECRET_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,99}$';
const NAME_RE = new RegExp(SECRET_NAME_PATTERN);

/** A reference to a secret that no longer exists (or never did): the caller must not proceed. */
export class SecretUnavailableError extends Error {
  constructor(readonly secretName: string, reason: 'deleted' | 'unreadable') {
    super(
      reason === 'deleted'
        ? `secret "${secretName}" is referenced but does not exist (deleted?); refusing to proceed without it: set it again with PUT ` +
            `/v1/console/secrets or svc secrets set`
        : `secret "${secretName}" does not open with this server's sealing key (SERVICE_SECRETS_KEY_FILE changed?); refusing to ` +
            `proceed without it`,
    );
    this.name = 'SecretUnavailableError';
  }
}

/** Who references a secret, for listings: `sso` (the SSO client secret), `connector:<name>`… */
export interface SecretReference {
  secret: string;
  by: string;
}

/** A module that holds secret references registers a lister, so `GET /v1/console/secrets` names it. */
export type ReferenceLister = (tx: Transaction<Database>) => Promise<SecretReference[]>;
const listers: ReferenceLister[] = [];

export function registerSecretReferences(lister: ReferenceLister): void {
  if (!listers.includes(lister)) listers.push(lister);
}

export interface SecretView {
  name: string;
  hint: string;
  created_at: string;
  updated_at: string;
  references: string[];
}

/** The name a reference points at: `secret:<name>` or the bare name. */
export function secretNameOf(ref: string): string {
  return ref.startsWith('secret:') ? ref.slice('secret:'.length) : ref;
}

export function isSecretName(name: string): boolean {
  return NAME_RE.test(name);
}

export async function listSecrets(store: Store): Promise<SecretView[]> {
  return store.transaction(async (tx) => {
    const rows = await tx.selectFrom('console_secrets').select(['name', 'hint', 'created_at', 'updated_at']).orderBy('name').execute();
    const refs = await allReferences(tx);
    return rows.map((r) => ({ ...r, references: refs.filter((x) => x.secret === r.name).map((x) => x.by).sort() }));
  });
}

/** Create or replace a secret; the value is sealed before it reaches the store. */
export async function putSecret(
  store: Store,
  sealer: Sealer,
  name: string,
  value: string,
): Promise<{ view: SecretView; created: boolean }> {
  return store.transaction(async (tx) => {
    const now = nowTimestamp();
    const existing = await tx.selectFrom('console_secrets').select(['id', 'created_at']).where('name', '=', name).executeTakeFirst();
    const id = existing?.id ?? newId();
    const sealed = sealer.seal(value, id);
    const hint = secretHint(value);
    if (existing) await tx.updateTable('console_secrets').set({ sealed, hint, updated_at: now }).where('id', '=', id).execute();
    else await tx.insertInto('console_secrets').values({ id, name, sealed, hint, created_at: now, updated_at: now }).execute();
    const refs = (await allReferences(tx))
      .filter((x) => x.secret === name)
      .map((x) => x.by)
      .sort();
    return { view: { name, hint, created_at: existing?.created_at ?? now, updated_at: now, references: refs }, created: !existing };
  });
}

/** Delete a secret; every reference to it fails closed from now on. Returns who referenced it, or null when unknown. */
export async function deleteSecret(store: Store, name: string): Promise<string[] | null> {
  return store.transaction(async (tx) => {
    const r = await tx.deleteFrom('console_secrets').where('name', '=', name).executeTakeFirst();
    if (Number(r.numDeletedRows) !== 1) return null;
    return (await allReferences(tx)).filter((x) => x.secret === name).map((x) => x.by).sort();
  });
}

/** The value a reference points at, read and opened now; throws SecretUnavailableError rather than proceed without it. */
export async function resolveSecret(store: Store, sealer: Sealer, ref: string): Promise<string> {
  const name = secretNameOf(ref);
  const row = await store.transaction((tx) =>
    tx.selectFrom('console_secrets').select(['id', 'sealed']).where('name', '=', name).executeTakeFirst(),
  );
  if (!row) throw new SecretUnavailableError(name, 'deleted');
  try {
    return sealer.open(row.sealed, row.id);
  } catch {
    throw new SecretUnavailableError(name, 'unreadable');
  }
}

/** True when a secret of that name exists (configuration-time check of a reference). */
export async function secretExists(store: Store, ref: string): Promise<boolean> {
  const name = secretNameOf(ref);
  const row = await store.transaction((tx) => tx.selectFrom('console_secrets').select('id').where('name', '=', name).executeTakeFirst());
  return row !== undefined;
}

async function allReferences(tx: Transaction<Database>): Promise<SecretReference[]> {
  const out: SecretReference[] = [];
  for (const l of listers) out.push(...(await l(tx)));
  return out;
}
