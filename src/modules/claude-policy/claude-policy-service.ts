/**
 * Managed agent settings as signed revisions: validate, dry-run and publish a surface's JSON
 * document (stored and signed through the governance module's signed revisions, surface
 * `claude:<surface>`), the signed artifact, and the hosts' check-ins (what each host holds, whether
 * it verifies, whether it is the published revision).
 */
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import { getRevision, listRevisions, policySigner, publishRevision, sha256Hex, type PolicyRevision } from '../governance/index.js';
import { changedPaths, storedSurface, validateDocument, type Surface } from './surfaces.js';

export const FILES: Record<Surface, string> = {
  'managed-settings': 'managed-settings.json',
  hooks: 'managed-settings.json',
  'managed-mcp': 'managed-mcp.json',
  sandbox: 'managed-settings.json',
};

const view = (surface: Surface, r: PolicyRevision): PolicyRevision => ({ ...r, surface });

/** The published (active) revision of a surface, or null when none was published. */
export async function publishedRevision(store: Store, tenant: string, surface: Surface): Promise<PolicyRevision | null> {
  try {
    return view(surface, await getRevision(store, tenant, storedSurface(surface), 'active'));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return null;
    throw err;
  }
}

export function validate(surface: Surface, content: string) {
  const v = validateDocument(surface, content);
  return {
    surface,
    valid: v.valid,
    errors: v.errors,
    warnings: v.warnings,
    credentials: v.credentials,
    sha256: v.artifact === null ? null : sha256Hex(v.artifact),
  };
}

/** What publish would do, recording nothing: the checks, the exact artifact, and what changes against the published revision. */
export async function dryRun(store: Store, tenant: string, surface: Surface, content: string) {
  const v = validateDocument(surface, content);
  const pub = await publishedRevision(store, tenant, surface);
  const sha = v.artifact === null ? null : sha256Hex(v.artifact);
  const changes = v.artifact === null ? [] : changedPaths(pub ? JSON.parse(pub.content) : {}, JSON.parse(v.artifact));
  return {
    surface,
    valid: v.valid,
    errors: v.errors,
    warnings: v.warnings,
    credentials: v.credentials,
    sha256: sha,
    artifact: v.artifact,
    published_revision: pub?.revision ?? null,
    unchanged: pub !== null && pub.sha256 === sha,
    changes,
  };
}

/**
 * Validates, signs and stores a new revision (the whole document) and makes it the published one; a document with errors or inline
 * credentials changes nothing (400).
 */
export async function publish(
  store: Store,
  dataDir: string,
  tenant: string,
  input: { surface: Surface; content: string; note: string; actor: string },
  inTx?: (tx: Transaction<Database>, rev: PolicyRevision) => Promise<void> | void,
): Promise<PolicyRevision> {
  const v = validateDocument(input.surface, input.content);
  if (!v.valid || v.artifact === null) {
    const creds =
      v.credentials.length > 0
        ? `refused: the document carries ${v.credentials.length} inline credential(s) (${v.credentials.map((c) => c.path).join(', ')}); ` +
          `reference them instead. `
        : '';
    throw errors.badRequest(`${creds}the ${input.surface} document is not valid: ${v.errors.join('; ')}`);
  }
  const rev = await publishRevision(
    store,
    dataDir,
    tenant,
    {
      surface: storedSurface(input.surface),
      content: v.artifact,
      note: input.note,
      actor: input.actor,
      check: (c) => {
        if (!validateDocument(input.surface, c).valid) throw errors.badRequest('the document is not valid');
      },
    },
    inTx && ((tx, r) => inTx(tx, view(input.surface, r))),
  );
  return view(input.surface, rev);
}

export async function versions(store: Store, tenant: string, surface: Surface): Promise<PolicyRevision[]> {
  return (await listRevisions(store, tenant, storedSurface(surface))).map((r) => view(surface, r));
}

export async function version(store: Store, tenant: string, surface: Surface, revision: number | 'active'): Promise<PolicyRevision> {
  return view(surface, await getRevision(store, tenant, storedSurface(surface), revision));
}

/** The signed artifact of a revision (default: the published one) with the key that verifies it. */
export async function artifact(store: Store, dataDir: string, tenant: string, surface: Surface, revision?: number) {
  const r = await version(store, tenant, surface, revision ?? 'active');
  const signer = await policySigner(dataDir);
  return {
    surface,
    revision: r.revision,
    file: FILES[surface],
    content: r.content,
    sha256: r.sha256,
    alg: 'ed25519' as const,
    signature: r.signature,
    key_fingerprint: r.key_fingerprint,
    public_key_pem: signer.publicKeyPem,
  };
}

/** Records what a host holds and answers whether it verifies and is the published revision. */
export async function checkin(
  store: Store,
  dataDir: string,
  tenant: string,
  input: { host: string; surface: Surface; bytes: Buffer; signature?: string; actor: string },
  inTx?: (tx: Transaction<Database>, out: CheckinOutcome) => Promise<void> | void,
): Promise<CheckinOutcome> {
  const sha = sha256Hex(input.bytes);
  const signer = await policySigner(dataDir);
  const all = await versions(store, tenant, input.surface);
  const published = all.find((r) => r.active) ?? null;
  const match = all.find((r) => r.sha256 === sha) ?? null;
  let verified = false;
  let reason: string;
  if (!match) reason = 'the bytes match no published revision of this surface (changed on the host, or not from this server)';
  else if (match.key_fingerprint !== signer.fingerprint)
    reason = `revision ${match.revision} was signed by a key this server ` + `no longer uses (${match.key_fingerprint.slice(0, 16)}…)`;
  else if (!signer.verify(input.bytes, match.signature))
    reason = `the signature of revision ${match.revision} ` + `does not verify over these bytes`;
  else if (input.signature !== undefined && !signer.verify(input.bytes, input.signature))
    reason = 'the signature installed on the host ' + 'does not verify over these bytes';
  else {
    verified = true;
    reason =
      match.revision === published?.revision
        ? 'verified: the published revision'
        : `verified, but revision ${match.revision} is not the ` + `published revision ${published?.revision ?? '(none)'}`;
  }
  const now = nowTimestamp();
  const row = {
    tenant_id: tenant,
    surface: input.surface,
    host: input.host,
    sha256: sha,
    revision: match?.revision ?? null,
    verified: verified ? 1 : 0,
    reason,
    checked_in_by: input.actor,
    checked_in_at: now,
  };
  const out: CheckinOutcome = {
    host: input.host,
    surface: input.surface,
    sha256: sha,
    verified,
    revision: match?.revision ?? null,
    published_revision: published?.revision ?? null,
    current: verified && match?.revision === published?.revision,
    reason,
    checked_in_at: now,
  };
  await store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const { tenant_id: _t, surface: _s, host: _h, ...set } = row;
    const res = await tx
      .updateTable('cp_checkins')
      .set(set)
      .where('tenant_id', '=', tenant)
      .where('surface', '=', input.surface)
      .where('host', '=', input.host)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) await tx.insertInto('cp_checkins').values(row).execute();
    await inTx?.(tx, out);
  });
  return out;
}

/** What a host's check-in answers. */
export interface CheckinOutcome {
  host: string;
  surface: Surface;
  sha256: string;
  verified: boolean;
  revision: number | null;
  published_revision: number | null;
  current: boolean;
  reason: string;
  checked_in_at: string;
}

/** Published vs observed: the published revision and what every host that checked in holds. */
export async function distribution(store: Store, tenant: string, surface: Surface) {
  const published = await publishedRevision(store, tenant, surface);
  const rows = await store.withTenant(tenant, (tx) =>
    tx
      .selectFrom('cp_checkins')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('surface', '=', surface)
      .orderBy('host')
      .limit(10000)
      .execute(),
  );
  const hosts = rows.map((r) => {
    const revision = r.revision === null ? null : Number(r.revision);
    const verified = r.verified === 1;
    return {
      host: r.host,
      sha256: r.sha256,
      revision,
      verified,
      current: verified && published !== null && revision === published.revision,
      reason: r.reason,
      checked_in_by: r.checked_in_by,
      checked_in_at: r.checked_in_at,
    };
  });
  return {
    surface,
    published: published ? { revision: published.revision, sha256: published.sha256 } : null,
    hosts,
    summary: {
      hosts: hosts.length,
      current: hosts.filter((h) => h.current).length,
      stale: hosts.filter((h) => h.verified && !h.current).length,
      unverified: hosts.filter((h) => !h.verified).length,
    },
  };
}
