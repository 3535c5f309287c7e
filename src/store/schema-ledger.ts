/** Kysely table types of the ledger area (migration 3); merged into `Database` in schema.ts. */

/** Tables of the ledger area; filled in by migration 3. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface LedgerTables {}

/** ledger tables with a `tenant_id` column (RLS on Postgres). */
export const LEDGER_TENANT_TABLES = [] as const;

/** ledger tables shared by all tenants. */
export const LEDGER_GLOBAL_TABLES = [] as const;
