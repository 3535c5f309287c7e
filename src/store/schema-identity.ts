/** Kysely table types of the identity area (migration 2); merged into `Database` in schema.ts. */

/** Tables of the identity area; filled in by migration 2. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface IdentityTables {}

/** identity tables with a `tenant_id` column (RLS on Postgres). */
export const IDENTITY_TENANT_TABLES = [] as const;

/** identity tables shared by all tenants. */
export const IDENTITY_GLOBAL_TABLES = [] as const;
