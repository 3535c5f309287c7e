/**
 * Creating an organization (tenant): the row, the creator's membership when there is one, and
 * the registered `OrgCreatedHook`s (the default-workspace seam), all in the caller's transaction.
 * The tenant's chain starts with `org.create` once the transaction has committed (`orgCreateMeta`).
 */
import type { Transaction } from 'kysely';
import type { AuditSink } from '../../ledger/audit-sink.js';
import type { AuditDraft } from '../../ledger/record.js';
import { nowTimestamp } from '../../ledger/time.js';
import { uuid7 } from '../../ledger/uuid7.js';
import type { Database } from '../../store/schema.js';
import type { IdentityRuntime } from '../../auth/runtime.js';

export const DEFAULT_ORG_NAME = 'Default Organization';
export const DEFAULT_REGION = 'default';

/** An organization as the routes return it. */
export interface OrgView {
  id: string;
  name: string;
  region: string;
  status: 'active' | 'suspended';
  created_at: string;
}

/** Insert a tenant (and the owner membership of `ownerId`); runs the org-created hooks. */
export async function createOrg(
  tx: Transaction<Database>,
  runtime: IdentityRuntime,
  input: { name: string; region?: string; ownerId?: string },
): Promise<OrgView> {
  const at = nowTimestamp();
  const org: OrgView = { id: uuid7(), name: input.name, region: input.region ?? DEFAULT_REGION, status: 'active', created_at: at };
  await tx
    .insertInto('tenants')
    .values({ ...org, deleted_at: null })
    .execute();
  if (input.ownerId) {
    await tx
      .insertInto('memberships')
      .values({ user_id: input.ownerId, org_id: org.id, role: 'owner', created_at: at, updated_at: at })
      .execute();
  }
  for (const hook of runtime.orgCreatedHooks) await hook(tx, { id: org.id, name: org.name });
  return org;
}

/** The meta of `org.create`, seq 1 of the new tenant's chain (DECISIONS.md "Audit ledger"). */
export function orgCreateMeta(org: OrgView): Record<string, unknown> {
  return { name: org.name, region: org.region };
}
