/**
 * Facts the console answers from real state (setup status, health summary, key custody, support
 * bundle): ledger heads and checkpoint ages, user counts, settings stored in the database. Read-only.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { X509Certificate, createHash, createPublicKey } from 'node:crypto';
import type { Services } from '../../serve/services.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import { readHead, readRecords } from '../../ledger/ledger-store.js';
import { CHECKPOINT_ACTION } from '../../ledger/checkpoint.js';

export interface ChainHead {
  tenant: string;
  head_seq: number;
  head_hash: string;
  last_checkpoint_seq: number | null;
  last_checkpoint_at: string | null;
  last_checkpoint_age_seconds: number | null;
}

const WINDOW = 100_000;
/** How far back from a head the last checkpoint is looked for (at most ten window queries). */
const CHECKPOINT_SCAN = 1_000_000;

/** Head of every chain that has records (system chain first), with its latest checkpoint. */
export async function ledgerHeads(s: Services): Promise<ChainHead[]> {
  const tenants = await s.store.transaction((tx) => tx.selectFrom('tenants').select('id').orderBy('id').execute());
  const out: ChainHead[] = [];
  for (const tenant of [SYSTEM_TENANT, ...tenants.map((t) => t.id)]) {
    const row = await s.store.withTenant(tenant, async (tx) => {
      const head = await readHead(tx, tenant);
      if (head === null) return null;
      // Windows back from the head (each one range query on the chain's key) until a checkpoint shows.
      let cp: { seq: number; occurred_at: string } | undefined;
      for (let to = head.seq; to >= 1 && cp === undefined && head.seq - to < CHECKPOINT_SCAN; to -= WINDOW) {
        const found = await readRecords(tx, tenant, Math.max(1, to - WINDOW + 1), WINDOW, { action: CHECKPOINT_ACTION, toSeq: to });
        const last = found[found.length - 1];
        if (last) cp = { seq: last.seq, occurred_at: last.occurred_at };
      }
      return { head, cp };
    });
    if (row === null) continue;
    const at = row.cp?.occurred_at ?? null;
    out.push({
      tenant,
      head_seq: row.head.seq,
      head_hash: row.head.hash,
      last_checkpoint_seq: row.cp ? Number(row.cp.seq) : null,
      last_checkpoint_at: at,
      last_checkpoint_age_seconds: at ? Math.max(0, Math.round((Date.now() - Date.parse(at)) / 1000)) : null,
    });
  }
  return out;
}

export interface UserCounts {
  total: number;
  active: number;
  superadmins_active: number;
  sso: number;
}

export async function userCounts(s: Services): Promise<UserCounts> {
  return s.store.transaction(async (tx) => {
    const rows = await tx.selectFrom('users').select(['status', 'superadmin']).execute();
    const sso = await tx.selectFrom('sso_identities').select('user_id').execute();
    return {
      total: rows.length,
      active: rows.filter((r) => r.status === 'active').length,
      superadmins_active: rows.filter((r) => r.status === 'active' && Number(r.superadmin) === 1).length,
      sso: sso.length,
    };
  });
}

/** A JSON document kept in `console_settings` (`sso`, `license`), or undefined. */
export async function readSetting<T>(s: Services, key: 'sso' | 'license'): Promise<{ value: T; updated_at: string } | undefined> {
  const row = await s.store.transaction((tx) =>
    tx.selectFrom('console_settings').select(['value', 'updated_at']).where('key', '=', key).executeTakeFirst(),
  );
  return row ? { value: JSON.parse(row.value) as T, updated_at: row.updated_at } : undefined;
}

export interface TlsFacts {
  self_signed: boolean;
  not_after: string;
  days_left: number;
  fingerprint_sha256: string;
  pin_sha256: string;
  subject: string;
  issuer: string;
  public_key_pem: string;
  algorithm: string;
  valid_from: string;
}

/** The served certificate, read from what the server loaded; undefined with --insecure. */
export function tlsFacts(s: Services): TlsFacts | undefined {
  const t = s.tlsMaterial;
  if (!t) return undefined;
  const leaf = new X509Certificate(t.certPem);
  const pub = leaf.publicKey;
  const alg =
    pub.asymmetricKeyType === 'ec'
      ? `ecdsa-${(pub.asymmetricKeyDetails?.namedCurve ?? '').replace('prime256v1', 'p256')}`
      : String(pub.asymmetricKeyType);
  return {
    self_signed: t.selfSigned,
    not_after: t.notAfter,
    days_left: Math.floor((Date.parse(t.notAfter) - Date.now()) / 86_400_000),
    fingerprint_sha256: t.fingerprintSha256,
    pin_sha256: t.pinSha256,
    subject: leaf.subject,
    issuer: leaf.issuer,
    public_key_pem: pub.export({ type: 'spki', format: 'pem' }).toString(),
    algorithm: alg,
    valid_from: new Date(leaf.validFrom).toISOString(),
  };
}

interface KeyringFileKey {
  key_id: string;
  algorithm: string;
  public_key: string;
  created_at: string;
  retired_at?: string;
  file?: string;
}

/** The ledger keyring's public description (audit-keys/keyring.json): never private material. */
export async function keyringEntries(dataDir: string): Promise<{ active: string; keys: KeyringFileKey[] } | undefined> {
  try {
    const doc = JSON.parse(await readFile(path.join(dataDir, 'audit-keys', 'keyring.json'), 'utf8')) as {
      active: string;
      keys: KeyringFileKey[];
    };
    return {
      active: doc.active,
      keys: doc.keys.map((k) => ({
        key_id: k.key_id,
        algorithm: k.algorithm,
        public_key: k.public_key,
        created_at: k.created_at,
        ...(k.retired_at ? { retired_at: k.retired_at } : {}),
        ...(k.file ? { file: k.file } : {}),
      })),
    };
  } catch {
    return undefined;
  }
}

/** SHA-256 hex of a public key's SPKI DER given as PEM, for fingerprints. */
export function spkiFingerprint(pem: string): string {
  return createHash('sha256').update(createPublicKey(pem).export({ type: 'spki', format: 'der' })).digest('hex');
}

