/** Kysely table types of the accessmap area (migration 5); merged into `Database` in schema.ts. */

/** Tables of the accessmap area; filled in by migration 5. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AccessmapTables {}

/** accessmap tables with a `tenant_id` column (RLS on Postgres). */
export const ACCESSMAP_TENANT_TABLES = [] as const;

/** accessmap tables shared by all tenants. */
export const ACCESSMAP_GLOBAL_TABLES = [] as const;
