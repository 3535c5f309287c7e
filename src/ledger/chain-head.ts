/** Whether a chain's head names its last stored record: appends and audited changes refuse a chain whose head was moved. */
import { sql } from 'kysely';
import { ApiError } from '../contract/errors.js';
import type { ChainTail } from './chain.js';
import { SEQ_BITS, buf, isSqlite, type Tx } from './row-codec.js';

/**
 * Thrown when a chain's head does not name its last stored record (its hash differs, or records lie
 * beyond it): the heads table was changed behind the ledger's back. Nothing can be appended to that
 * chain until an operator has looked (`GET /v1/audit/verify` names the break), and no change that
 * would need a record there may commit (ledger/audit-intent.ts). A request that meets it is answered
 * 503 `audit_chain_damaged` (nothing was changed); reading the chain still works (core/audit/routes.ts).
 */
export class ChainHeadError extends ApiError {
  override readonly name = 'ChainHeadError';
  constructor(
    readonly tenant: string,
    readonly detail: string,
  ) {
    super('audit_chain_damaged', `audit chain ${tenant} cannot be appended to: ${detail}`);
  }
}

/** What is wrong with a head against the stored records, or null when it names the last record. */
export function headProblem(head: ChainTail, stored: Uint8Array | null | undefined, beyond: boolean): string | null {
  if (stored === undefined || stored === null) return `its head names seq ${head.seq}, which is not stored`;
  if (buf(stored).toString('hex') !== head.hash) return `its head's hash is not the hash of record ${head.seq}`;
  if (beyond) return `records are stored beyond its head (seq ${head.seq})`;
  return null;
}

/**
 * Throws {@link ChainHeadError} unless `tenant`'s head names its last stored record (any backend,
 * inside the caller's transaction, which must be bound to that tenant on Postgres). One statement,
 * so one snapshot: an append committing meanwhile is never mistaken for records beyond the head.
 */
export async function assertHeadConsistent(tx: Tx, tenant: string): Promise<void> {
  type Row = { seq: number | string | null; hash: Uint8Array | null; rec_hash: Uint8Array | null; beyond: number | boolean };
  const row = isSqlite(tx)
    ? (
        await sql<Row>`select h.seq, h.hash, r.hash as rec_hash,
            exists (select 1 from audit_records b where b.pos = ((h.chain << ${SEQ_BITS}) | h.seq) + 1) as beyond
          from audit_heads h left join audit_records r on r.pos = ((h.chain << ${SEQ_BITS}) | h.seq)
          where h.tenant_id = ${tenant}`.execute(tx)
      ).rows[0]
    : (
        // The last stored seq is one backward probe of the primary key. A correlated `exists` here
        // was planned as a hashed scan of the tenant's whole chain (test/ledger/chain-head-cost.test.ts).
        await sql<Row>`select h.seq, h.hash, r.hash as rec_hash,
            coalesce((select max(b.seq) from audit_records b where b.tenant_id = ${tenant}), 0) > coalesce(h.seq, 0) as beyond
          from (select 1) as one
          left join audit_heads h on h.tenant_id = ${tenant}
          left join audit_records r on r.tenant_id = ${tenant} and r.seq = h.seq`.execute(tx)
      ).rows[0];
  // SQLite rows are keyed by the head's chain number, so a chain without a head has no rows.
  if (row === undefined || row.seq === null || row.hash === null) {
    if (row !== undefined && (row.beyond === true || row.beyond === 1))
      throw new ChainHeadError(tenant, 'records are stored but it has no head');
    return;
  }
  const head = { seq: Number(row.seq), hash: buf(row.hash).toString('hex') };
  const problem = headProblem(head, row.rec_hash, row.beyond === true || row.beyond === 1);
  if (problem !== null) throw new ChainHeadError(tenant, problem);
}

/**
 * {@link assertHeadConsistent} for `chain` from a transaction bound to any tenant (or none): on
 * Postgres, row-level security shows only the bound tenant's rows, so the two lookups run with
 * `app.tenant_id` set to the chain's tenant and then put back.
 */
export async function assertChainAppendable(tx: Tx, chain: string): Promise<void> {
  if (isSqlite(tx)) return assertHeadConsistent(tx, chain);
  const bound = (await sql<{ t: string | null }>`select current_setting('app.tenant_id', true) as t`.execute(tx)).rows[0]?.t ?? '';
  if (bound === chain) return assertHeadConsistent(tx, chain);
  await sql`select set_config('app.tenant_id', ${chain}, true)`.execute(tx);
  try {
    await assertHeadConsistent(tx, chain);
  } finally {
    // After a SQL error the transaction is aborted and rolls back anyway: keep that error.
    await sql`select set_config('app.tenant_id', ${bound}, true)`.execute(tx).catch(() => undefined);
  }
}
