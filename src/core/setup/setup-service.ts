/**
 * Redeeming the setup token: the first organization and its superadmin owner in one
 * transaction. The `setup_claims` row (primary key id = 1) makes exactly one of two concurrent
 * redemptions win on both backends: SQLite serialises writers, and on Postgres the second insert
 * waits for the first transaction and then fails on the key.
 */
import { ApiError } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { uuid7 } from '../../ledger/uuid7.js';
import { SYSTEM_TENANT } from '../../ledger/record.js';
import type { AuditSink } from '../../ledger/audit-sink.js';
import type { IdentityRuntime } from '../../auth/runtime.js';
import { countUsers, findUserByEmail, normalizeEmail, userView, type UserView } from '../../auth/identity-store.js';
import { assertPasswordPolicy, hashPassword } from '../../auth/passwords.js';
import { removeSetupToken, setupTokenMatches } from '../../auth/setup-token.js';
import { dropSetupToken, sharedSetupTokenMatches } from './setup-claim.js';
import type { AuditTarget } from '../../http/context.js';
import { createOrg, DEFAULT_ORG_NAME, orgCreateMeta, type OrgView } from '../system/org-service.js';

export interface FirstAdmin {
  email: string;
  password: string;
  organization?: string;
}

/** The records of a first admin's creation (`POST /v1/setup` declares them), setup.complete first. */
export const SETUP_AUDIT = ['setup.complete', 'org.create', 'user.create', 'membership.create'] as const;

/** One of them, acted by the new admin (`user:<id>`), on `chain`. */
export interface SetupRecord {
  action: (typeof SETUP_AUDIT)[number];
  chain: string;
  userId: string;
  target: AuditTarget;
  meta: Record<string, unknown>;
}

/** Appends a SetupRecord: `ctx.audit` in the setup request, the ledger itself for `--seed-demo`. */
export type SetupRecorder = (r: SetupRecord) => Promise<unknown>;

/** The recorder outside a request (`--seed-demo` at start). */
export function ledgerRecorder(audit: AuditSink): SetupRecorder {
  return (r) =>
    audit.append(r.chain, {
      actor: `user:${r.userId}`,
      actor_kind: 'user',
      action: r.action,
      target_kind: r.target.kind,
      target_id: r.target.id,
      meta: r.meta,
    });
}

/** Create the first organization and superadmin without a token check (setup and --seed-demo). */
export async function createFirstAdmin(
  runtime: IdentityRuntime,
  record: SetupRecorder,
  input: FirstAdmin,
  via: 'setup' | 'seed-demo',
): Promise<{ user: UserView; organization: OrgView }> {
  assertPasswordPolicy(input.password);
  const passwordHash = await hashPassword(input.password, runtime.passwordParams);
  const at = nowTimestamp();
  let created: { user: UserView; organization: OrgView };
  try {
    created = await runtime.store.transaction(async (tx) => {
      await tx.insertInto('setup_claims').values({ id: 1, claimed_at: at }).execute();
      if ((await countUsers(tx)) > 0) throw new ApiError('setup_complete');
      const user = {
        id: uuid7(),
        email: normalizeEmail(input.email),
        password_hash: passwordHash,
        superadmin: 1 as const,
        status: 'active' as const,
        created_at: at,
        updated_at: at,
      };
      await tx.insertInto('users').values(user).execute();
      const organization = await createOrg(tx, runtime, { name: input.organization ?? DEFAULT_ORG_NAME, ownerId: user.id });
      return { user: userView(user), organization };
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The claim row or a user already exists: another redemption won.
    const done = await runtime.store.transaction(
      async (tx) => (await countUsers(tx)) > 0 || (await tx.selectFrom('setup_claims').select('id').executeTakeFirst()) !== undefined,
    );
    if (done) throw new ApiError('setup_complete');
    throw err;
  }
  runtime.markSetupComplete();
  runtime.invalidate();
  await removeSetupToken(runtime.dataDir);
  if (runtime.store.capabilities.supportsConcurrentWriters) await dropSetupToken(runtime.store);
  const { user, organization } = created;
  const userId = user.id;
  const asUser = { kind: 'user', id: userId };
  // Seq 1 of the new tenant's chain, then the identity events on the system chain.
  await record({
    action: 'org.create',
    chain: organization.id,
    userId,
    target: { kind: 'tenant', id: organization.id },
    meta: orgCreateMeta(organization),
  });
  await record({ action: 'setup.complete', chain: SYSTEM_TENANT, userId, target: asUser, meta: { via, tenant: organization.id } });
  await record({ action: 'user.create', chain: SYSTEM_TENANT, userId, target: asUser, meta: { email: user.email, superadmin: true } });
  await record({
    action: 'membership.create',
    chain: SYSTEM_TENANT,
    userId,
    target: asUser,
    meta: { tenant: organization.id, role: 'owner' },
  });
  return created;
}

/** `POST /v1/setup`: 409 once complete, 403 on a wrong token, else the first admin. */
export async function redeemSetup(
  runtime: IdentityRuntime,
  record: SetupRecorder,
  token: string,
  input: FirstAdmin,
): Promise<{ user: UserView; organization: OrgView }> {
  if (!runtime.setupRequired()) throw new ApiError('setup_complete');
  const shared = runtime.store.capabilities.supportsConcurrentWriters;
  if (!(await setupTokenMatches(runtime.dataDir, token)) && !(shared && (await sharedSetupTokenMatches(runtime.store, token)))) {
    // The digest is gone after a redemption by another replica/process: that is "complete", not "wrong".
    if (!(await runtime.loadSetupState())) throw new ApiError('setup_complete');
    throw new ApiError('forbidden', 'invalid setup token');
  }
  return createFirstAdmin(runtime, record, input, 'setup');
}

/** Whether an e-mail is taken (used by seed-demo to stay idempotent). */
export async function userExists(runtime: IdentityRuntime, email: string): Promise<boolean> {
  return runtime.store.transaction(async (tx) => (await findUserByEmail(tx, email)) !== undefined);
}
