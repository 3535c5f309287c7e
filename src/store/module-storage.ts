/**
 * What one area keeps in the database (its tables, its migrations on both backends, its sequences,
 * its SQLite files beside svc.db) and the fold of every area's declaration into the lists the stores
 * run: the migrations of each backend, the Postgres app role's grants and sequences, the files the
 * SQLite store attaches. The fold refuses a list the runner could not apply unambiguously (a
 * duplicate or missing number, a step on one backend only, a table or attached file declared twice)
 * when it is built, so a bad registration stops the process at start.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Transaction } from 'kysely';
import type { Migration } from './migrations.js';
import type { Database } from './schema.js';

/** A privilege the Postgres app role may hold on a table. */
export type Privilege = 'select' | 'insert' | 'update' | 'delete';

/** One table an area owns. */
export interface TableDecl {
  name: string;
  /** `tenant`: carries `tenant_id`, read inside `withTenant`; `global`: shared by all tenants */
  scope: 'tenant' | 'global';
  /** what the Postgres app role may do on it */
  grants: readonly Privilege[];
  /** whether the `tenant_isolation` RLS policy confines it on Postgres (every tenant table: verifyIsolation refuses one without) */
  rls: boolean;
}

/** The database part of a manifest: light (no route code), so the store, the CLI and workers load it. */
export interface ModuleStorage {
  /** the area's name, as in its manifest */
  name: string;
  tables: readonly TableDecl[];
  /** the same versions and names on both backends */
  migrations: { sqlite: readonly Migration[]; postgres: readonly Migration[] };
  /** sequences the app role draws from (`nextval`) */
  sequences?: readonly string[];
  /** SQLite files of its own beside svc.db (ignored on Postgres) */
  sqliteFiles?: readonly SqliteAttachedFile[];
}

/**
 * A SQLite file an area keeps beside svc.db, for tables whose writes must not wait for svc.db's one
 * writer (SQLite has one per file). The store attaches it to its connection at open (created if
 * missing, owner-only, in WAL mode with the store's durability and cache) and calls the hooks below;
 * `svc backup` copies it with svc.db as of one instant. The store knows none of its tables.
 */
export interface SqliteAttachedFile {
  /** its name in the data directory */
  file: string;
  /** the schema it is attached under: queries name its tables `<schema>.<table>`, or bare where svc.db has none of the name */
  schema: string;
  /**
   * At open, before anything reads the file: throws a StoreError for a file that is missing what svc.db
   * says it holds, or is another database's. Returns whether it holds its tables already, so that
   * svc.db's transactions may lock svc.db alone (the store's transactions never write the file).
   */
  check(sqlite: BetterSqlite3.Database, path: string): boolean;
  /** At open, once `check` said true: repairs what files restored from different moments disagree on. */
  afterOpen?(sqlite: BetterSqlite3.Database): void;
  /** After every `migrate()`: moves into the file what the migrations built in svc.db; what it did, for the store's log. */
  afterMigrate?(sqlite: BetterSqlite3.Database): { fields: object; msg: string } | undefined;
  /** `svc backup`, before it locks svc.db: throws a StoreError for a data directory whose file cannot be copied yet. */
  backupCheck?(reader: BetterSqlite3.Database, path: string, dataDir: string): void;
  /** `svc backup`: numbers read in the snapshot it copies, reported in its result beside the files. */
  backupFacts?(reader: BetterSqlite3.Database): Record<string, number>;
}

/**
 * A module's typed view of a store transaction over its own table interfaces, so a new module needs
 * no edit of schema.ts's `Database`: `ownTables<KitTables>(tx).insertInto('kit_notes')…`.
 */
export function ownTables<T>(tx: Transaction<Database>): Transaction<T> {
  return tx as unknown as Transaction<T>;
}

/** Table declarations from an area's tenant and global name lists and its grants (src/store/schema-<area>.ts). */
export function tablesOf(
  tenant: readonly string[],
  global: readonly string[],
  grants: Readonly<Record<string, readonly Privilege[]>>,
): TableDecl[] {
  const grantOf = (name: string): readonly Privilege[] => {
    const g = grants[name];
    if (!g) throw new Error(`table ${name} has no app-role grants`);
    return g;
  };
  return [
    ...tenant.map((name) => ({ name, scope: 'tenant' as const, grants: grantOf(name), rls: true })),
    ...global.map((name) => ({ name, scope: 'global' as const, grants: grantOf(name), rls: false })),
  ];
}

/**
 * The folded storage of every registered area. The migration arrays are the ones the stores run
 * (SQLITE_MIGRATIONS / POSTGRES_MIGRATIONS are these very arrays), so an area registered at
 * composition (a test's extra manifest) is migrated by the next `store.migrate()`.
 */
export class StorageRegistry {
  readonly sqlite: Migration[] = [];
  readonly postgres: Migration[] = [];
  readonly #areas: ModuleStorage[] = [];

  constructor(areas: readonly ModuleStorage[]) {
    this.#fold(areas);
  }

  /** The registered areas, in registration order. */
  get areas(): readonly ModuleStorage[] {
    return this.#areas;
  }

  /** Adds areas (idempotent per declaration object); refuses what the fold refuses, leaving the lists as they were. */
  register(areas: readonly ModuleStorage[]): void {
    const fresh = areas.filter((a) => !this.#areas.includes(a));
    if (fresh.length > 0) this.#fold(fresh);
  }

  /** Which area owns a migration version (for messages and tests). */
  ownerOf(version: number): string | undefined {
    return this.#areas.find((a) => a.migrations.sqlite.some((m) => m.version === version))?.name;
  }

  /** Every declared table with the app role's privileges on it. */
  grants(): Record<string, readonly Privilege[]> {
    return Object.fromEntries(this.#areas.flatMap((a) => a.tables.map((t) => [t.name, t.grants] as const)));
  }

  /** Every sequence the app role draws from. */
  sequences(): string[] {
    return this.#areas.flatMap((a) => a.sequences ?? []);
  }

  /** Every area's SQLite files beside svc.db, in registration order. */
  sqliteFiles(): SqliteAttachedFile[] {
    return this.#areas.flatMap((a) => a.sqliteFiles ?? []);
  }

  /** Tables of one scope, in registration order. */
  tables(scope: TableDecl['scope']): string[] {
    return this.#areas.flatMap((a) => a.tables.filter((t) => t.scope === scope).map((t) => t.name));
  }

  #fold(fresh: readonly ModuleStorage[]): void {
    const all = [...this.#areas, ...fresh];
    checkStorage(all);
    this.#areas.push(...fresh);
    for (const a of fresh) {
      this.sqlite.push(...a.migrations.sqlite);
      this.postgres.push(...a.migrations.postgres);
    }
    this.sqlite.sort((x, y) => x.version - y.version);
    this.postgres.sort((x, y) => x.version - y.version);
  }
}

/**
 * Throws naming the areas at fault unless the migrations number 1..N once each, mirrored on both backends, and tables, attached
 * SQLite files and their schema names are unique.
 */
export function checkStorage(areas: readonly ModuleStorage[]): void {
  const problems: string[] = [];
  const owner = new Map<number, string>();
  for (const a of areas) {
    const key = (ms: readonly Migration[]): string => ms.map((m) => `${m.version}:${m.name}`).sort().join(',');
    if (key(a.migrations.sqlite) !== key(a.migrations.postgres)) {
      problems.push(`area ${a.name}: its sqlite and postgres migrations differ (same versions and names on both backends)`);
    }
    for (const m of a.migrations.sqlite) {
      const prior = owner.get(m.version);
      if (!Number.isInteger(m.version) || m.version < 1) problems.push(`area ${a.name}: invalid migration version ${m.version}`);
      else if (prior !== undefined) problems.push(`migration ${m.version} is declared twice (${prior} and ${a.name})`);
      else owner.set(m.version, a.name);
    }
  }
  const top = Math.max(0, ...owner.keys());
  for (let v = 1; v <= top; v++) {
    if (!owner.has(v)) problems.push(`migration ${v} is missing (the list must number 1..${top} with no gap)`);
  }
  const tables = new Map<string, string>();
  for (const a of areas) {
    for (const t of a.tables) {
      const prior = tables.get(t.name);
      if (prior !== undefined) problems.push(`table ${t.name} is declared twice (${prior} and ${a.name})`);
      else tables.set(t.name, a.name);
      if (t.scope === 'global' && t.rls) problems.push(`table ${t.name} of ${a.name} is global but asks for tenant_isolation`);
    }
  }
  const attached = new Map<string, string>();
  for (const a of areas) {
    for (const f of a.sqliteFiles ?? []) {
      for (const key of [`file ${f.file}`, `schema ${f.schema}`]) {
        const prior = attached.get(key);
        if (prior !== undefined) problems.push(`attached SQLite ${key} is declared twice (${prior} and ${a.name})`);
        else attached.set(key, a.name);
      }
      // The schema name is written into SQL (`attach … as <schema>`), and SQLite reserves main and temp.
      if (!/^[a-z_][a-z0-9_]*$/.test(f.schema) || f.schema === 'main' || f.schema === 'temp')
        problems.push(`attached SQLite file ${f.file} of ${a.name}: schema ${f.schema} is not a plain name of its own`);
    }
  }
  if (problems.length > 0) throw new Error(`module storage refused: ${problems.join('; ')}`);
}
