/**
 * Signed policy revisions per tenant and surface: immutable rows numbered 1, 2, 3… (int64,
 * monotonic), each with its content, note, the artifact's sha256, the signing key's fingerprint and
 * the signature; `gov_policy_active` names the revision that decides. Publish compiles first: a
 * document that does not compile is refused and never replaces the active revision. Publish stores
 * the new revision and moves the active pointer in one transaction (replace semantics: a revision
 * is a whole document). Rollback moves the pointer to an earlier revision.
 *
 * The decision path reads the active revision through {@link activePolicy}: compiled once per
 * revision and cached per process; the cache re-reads the pointer at most once per `ttlMs` (and at
 * once after a publish or rollback through this process), so another replica's publish is seen
 * within that time.
 */
import { ApiError, errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Store } from '../../store/store.js';
import { assertTenantWritable, isUniqueViolation } from '../../http/request-scope.js';
import { compilePolicies, type CompiledPolicySet } from './policy-engine.js';
import { policySigner, sha256Hex } from './policy-signing.js';

export interface PolicyRevision {
  surface: string;
  revision: number;
  content: string;
  note: string;
  sha256: string;
  key_fingerprint: string;
  signature: string;
  created_by: string;
  created_at: string;
  active: boolean;
}

export interface ActivePolicy {
  revision: number;
  sha256: string;
  compiled: CompiledPolicySet;
}

/** The surface the hook decision endpoint decides with. */
export const HOOKS_SURFACE = 'hooks';

const compiledByHash = new Map<string, CompiledPolicySet>();

/** Compiles `content`, reusing a compiled set for identical content (a rollback, replicas of one doc). */
export function compiledFor(content: string): CompiledPolicySet {
  const key = sha256Hex(content);
  let c = compiledByHash.get(key);
  if (!c) {
    const r = compilePolicies(content);
    if (!r.ok || !r.compiled) throw new ApiError('bad_request', `the policy does not compile: ${r.errors.join('; ')}`);
    c = r.compiled;
    if (compiledByHash.size > 256) compiledByHash.clear();
    compiledByHash.set(key, c);
  }
  return c;
}

type Row = {
  surface: string;
  revision: number | string;
  content: string;
  note: string;
  sha256: string;
  key_fingerprint: string;
  signature: string;
  created_by: string;
  created_at: string;
};

const toRevision = (r: Row, active: number | null): PolicyRevision => ({
  ...r,
  revision: Number(r.revision),
  active: Number(r.revision) === active,
});

async function activeRevision(
  tx: Parameters<Parameters<Store['withTenant']>[1]>[0],
  tenant: string,
  surface: string,
): Promise<number | null> {
  const a = await tx
    .selectFrom('gov_policy_active')
    .select('revision')
    .where('tenant_id', '=', tenant)
    .where('surface', '=', surface)
    .executeTakeFirst();
  return a ? Number(a.revision) : null;
}

/**
 * Checks (by default: compiles as Cedar), signs and stores a new revision and makes it active,
 * atomically. `check` throws to refuse; the claude-policy module passes its own for JSON surfaces.
 */
export async function publishRevision(
  store: Store,
  dataDir: string,
  tenant: string,
  input: { surface: string; content: string; note?: string; actor: string; check?: (content: string) => unknown },
  inTx?: (tx: Transaction<Database>, rev: PolicyRevision) => Promise<void> | void,
): Promise<PolicyRevision> {
  (input.check ?? compiledFor)(input.content);
  const signer = await policySigner(dataDir);
  const artifact = Buffer.from(input.content, 'utf8');
  const now = nowTimestamp();
  const out = await store
    .withTenant(tenant, async (tx) => {
      await assertTenantWritable(tx, tenant);
      const last = await tx
        .selectFrom('gov_policy_revisions')
        .select((eb) => eb.fn.max('revision').as('m'))
        .where('tenant_id', '=', tenant)
        .where('surface', '=', input.surface)
        .executeTakeFirst();
      const row: Row = {
        surface: input.surface,
        revision: Number(last?.m ?? 0) + 1,
        content: input.content,
        note: input.note ?? '',
        sha256: sha256Hex(artifact),
        key_fingerprint: signer.fingerprint,
        signature: signer.sign(artifact),
        created_by: input.actor,
        created_at: now,
      };
      await tx
        .insertInto('gov_policy_revisions')
        .values({ ...row, tenant_id: tenant, revision: Number(row.revision) })
        .execute();
      await setActive(tx, tenant, input.surface, Number(row.revision), now);
      const rev = toRevision(row, Number(row.revision));
      await inTx?.(tx, rev);
      return rev;
    })
    .catch((err: unknown) => {
      // Two publishers raced for the same number: the loser retries nothing and says so.
      if (isUniqueViolation(err)) throw errors.conflict('another revision was published concurrently; publish again');
      throw err;
    });
  forget(tenant, input.surface);
  return out;
}

async function setActive(
  tx: Parameters<Parameters<Store['withTenant']>[1]>[0],
  tenant: string,
  surface: string,
  revision: number,
  now: string,
): Promise<void> {
  const res = await tx
    .updateTable('gov_policy_active')
    .set({ revision, updated_at: now })
    .where('tenant_id', '=', tenant)
    .where('surface', '=', surface)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0)
    await tx.insertInto('gov_policy_active').values({ tenant_id: tenant, surface, revision, updated_at: now }).execute();
}

/** Makes an earlier (or any stored) revision active again; its content must still compile. */
export async function rollbackRevision(
  store: Store,
  tenant: string,
  surface: string,
  revision: number,
  inTx?: (tx: Transaction<Database>, out: { from: number | null; to: PolicyRevision }) => Promise<void> | void,
): Promise<{ from: number | null; to: PolicyRevision }> {
  const out = await store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    const row = (await tx
      .selectFrom('gov_policy_revisions')
      .select(['surface', 'revision', 'content', 'note', 'sha256', 'key_fingerprint', 'signature', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .where('surface', '=', surface)
      .where('revision', '=', revision)
      .executeTakeFirst()) as Row | undefined;
    if (!row) throw errors.notFound('policy revision');
    compiledFor(row.content);
    const from = await activeRevision(tx, tenant, surface);
    await setActive(tx, tenant, surface, revision, nowTimestamp());
    const out = { from, to: toRevision(row, revision) };
    await inTx?.(tx, out);
    return out;
  });
  forget(tenant, surface);
  return out;
}

export async function listRevisions(store: Store, tenant: string, surface: string): Promise<PolicyRevision[]> {
  return store.withTenant(tenant, async (tx) => {
    const active = await activeRevision(tx, tenant, surface);
    const rows = (await tx
      .selectFrom('gov_policy_revisions')
      .select(['surface', 'revision', 'content', 'note', 'sha256', 'key_fingerprint', 'signature', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .where('surface', '=', surface)
      .orderBy('revision', 'desc')
      .limit(1000)
      .execute()) as Row[];
    return rows.map((r) => toRevision(r, active));
  });
}

export async function getRevision(store: Store, tenant: string, surface: string, revision: number | 'active'): Promise<PolicyRevision> {
  const r = await store.withTenant(tenant, async (tx) => {
    const active = await activeRevision(tx, tenant, surface);
    const n = revision === 'active' ? active : revision;
    if (n === null) return undefined;
    const row = (await tx
      .selectFrom('gov_policy_revisions')
      .select(['surface', 'revision', 'content', 'note', 'sha256', 'key_fingerprint', 'signature', 'created_by', 'created_at'])
      .where('tenant_id', '=', tenant)
      .where('surface', '=', surface)
      .where('revision', '=', n)
      .executeTakeFirst()) as Row | undefined;
    return row ? toRevision(row, active) : undefined;
  });
  if (!r) throw errors.notFound(revision === 'active' ? 'active policy revision' : 'policy revision');
  return r;
}

// ---- the decision path's cache of the active revision ----

interface CacheEntry {
  at: number;
  value: ActivePolicy | null;
  pending?: Promise<ActivePolicy | null>;
}
const active = new Map<string, CacheEntry>();
export const ACTIVE_TTL_MS = 1000;

function forget(tenant: string, surface: string): void {
  active.delete(`${tenant}|${surface}`);
}

/** The active revision of a surface, compiled; null when none was published. */
export function activePolicy(store: Store, tenant: string, surface: string): Promise<ActivePolicy | null> | ActivePolicy | null {
  const key = `${tenant}|${surface}`;
  const e = active.get(key);
  const now = Date.now();
  if (e && now - e.at < ACTIVE_TTL_MS) return e.value;
  if (e?.pending) return e.pending;
  const pending = store
    .withTenant(tenant, async (tx) => {
      const n = await activeRevision(tx, tenant, surface);
      if (n === null) return null;
      const row = await tx
        .selectFrom('gov_policy_revisions')
        .select(['content', 'sha256'])
        .where('tenant_id', '=', tenant)
        .where('surface', '=', surface)
        .where('revision', '=', n)
        .executeTakeFirstOrThrow();
      return { revision: n, sha256: row.sha256, compiled: compiledFor(row.content) };
    })
    .then(
      (value) => {
        active.set(key, { at: Date.now(), value });
        return value;
      },
      (err: unknown) => {
        // Keep serving the last known revision rather than failing every decision; retry next call.
        if (e) active.set(key, { at: e.at, value: e.value });
        else active.delete(key);
        throw err;
      },
    );
  active.set(key, { at: e?.at ?? 0, value: e?.value ?? null, pending });
  return pending;
}
