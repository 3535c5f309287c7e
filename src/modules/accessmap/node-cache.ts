/**
 * The nodes SQLite ingest has already resolved, kept in memory (docs/perf/accessmap-the-node-cache.md).
 *
 * Why: a batch resolves every observation's origin and resource to a node number before its edges
 * are stored (node-lookup.ts). At 1,000,000 nodes and 10,000,000 edges those lookups were a
 * quarter of the appending thread's time (two B-tree descents on 36-character keys per edge), and
 * with merges on their own thread that thread is what bounds ingest. A node's id, tenant, kind,
 * natural key, external id and number do not change while it exists, so what a lookup answered
 * stays true until a node goes away or one of those columns is rewritten.
 *
 * Exact, not eventually right:
 * - **Deletes and rewrites**: triggers (SQLite migration 18) add one to `access_node_epoch` on
 *   every delete of an agent or an access node and on every update of a column a lookup answers
 *   with, whoever runs the statement (the service, another process on the file, an operator's
 *   `sqlite3`). Every lookup reads the counter in its own transaction first; when it has moved, the
 *   cache is emptied and the lookup asks the database. The counter moves with the transaction that
 *   deleted, so a delete rolled back leaves it where it was.
 * - **Answers from writes that did not last** (a node created by a batch that failed, a member of a
 *   group commit rolled back to its savepoint, a group whose COMMIT failed): what a transaction's
 *   lookups answered from the database, and the nodes it created, are kept only once its caller
 *   has seen it commit ({@link NodeLookups.committed}), and only if the counter the transaction read
 *   is still the cache's.
 *
 * Memory: at most `SERVICE_ACCESSMAP_NODE_CACHE` entries (default 2,000,000; measured in V8, about
 * 90 bytes an entry by id, 170 by natural key); a full cache is emptied and fills again from the
 * next batches. 0 turns it off. PostgreSQL has none: replicas write at once there, and a batch
 * resolves each kind in one round trip.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle, SqliteStatement } from '../../store/store-types.js';

export const DEFAULT_NODE_CACHE = 2_000_000;

/** The cap from `SERVICE_ACCESSMAP_NODE_CACHE`; throws on a value that is not an integer in 0..100,000,000. */
export function nodeCacheFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_ACCESSMAP_NODE_CACHE'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_NODE_CACHE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 100_000_000)
    throw new RangeError(
      `SERVICE_ACCESSMAP_NODE_CACHE must be an integer from 0 to 100000000 (0 turns the node cache off), got ${JSON.stringify(raw)}`,
    );
  return n;
}

/** A node as a lookup answers it. */
export interface KnownNode {
  id: string;
  no: number;
}

/** One tenant's nodes as lookups answered them. */
export interface TenantNodes {
  /** access nodes (not agents) by id: the number and kind as one number ({@link nodeCode}) */
  readonly byId: Map<string, number>;
  /** access nodes by `kind \n ref` */
  readonly byRef: Map<string, KnownNode>;
  /** agents by id: the number */
  readonly agents: Map<string, number>;
  /** agents by external id */
  readonly externals: Map<string, KnownNode>;
}

/** The kinds of `access_nodes`, coded into {@link TenantNodes.byId}'s values. */
const KIND_CODES: Readonly<Record<string, number>> = { session: 1, identity: 2, resource: 3 };
const KIND_NAMES = ['', 'session', 'identity', 'resource'] as const;

/** A node's value in {@link TenantNodes.byId}: a number, so a million of them cost no objects. */
export const nodeCode = (kind: string, no: number): number => no * 4 + (KIND_CODES[kind] ?? 0);
/** The kind {@link nodeCode} coded. */
export const kindOfCode = (code: number): string => KIND_NAMES[code % 4] as string;
/** The number {@link nodeCode} coded. */
export const numberOfCode = (code: number): number => Math.floor(code / 4);

/** What a transaction's lookups learned from the database, kept once it has committed. */
type Learned = [tenant: string, add: (t: TenantNodes) => number];

class NodeCache {
  /** the counter the cached answers hold for; -1: none read yet */
  epoch = -1;
  size = 0;
  readonly tenants = new Map<string, TenantNodes>();
  constructor(
    readonly cap: number,
    readonly epochOf: SqliteStatement,
  ) {}

  clear(epoch: number): void {
    this.epoch = epoch;
    this.size = 0;
    this.tenants.clear();
  }

  tenant(id: string): TenantNodes {
    let t = this.tenants.get(id);
    if (t === undefined) this.tenants.set(id, (t = { byId: new Map(), byRef: new Map(), agents: new Map(), externals: new Map() }));
    return t;
  }
}

/**
 * The lookups of one transaction: answers from the cache as it holds for the counter this
 * transaction reads, and what the database answered besides, to keep once the caller has seen
 * the transaction commit.
 */
export class NodeLookups {
  #epoch: number;
  #learned: Learned[] = [];
  constructor(
    readonly cache: NodeCache,
    epoch: number,
  ) {
    this.#epoch = epoch;
  }

  /** The cached nodes of `tenant`, valid now (reads the counter first). Do not keep the result past the lookup it serves. */
  nodes(tenant: string): TenantNodes {
    const epoch = Number(this.cache.epochOf.get());
    if (epoch !== this.cache.epoch) this.cache.clear(epoch);
    // Something this transaction learned before the counter moved may be what moved it.
    if (epoch !== this.#epoch) {
      this.#epoch = epoch;
      this.#learned = [];
    }
    return this.cache.tenant(tenant);
  }

  /** Records answers the database gave (or nodes this transaction created), to keep if it commits. */
  learn(tenant: string, add: (t: TenantNodes) => number): void {
    this.#learned.push([tenant, add]);
  }

  /**
   * Keeps what this transaction learned; call only after it has committed. Nothing is kept when
   * the counter has moved since (the cache was emptied for a later one, or will be at its next
   * use), so an answer older than a delete is never kept.
   */
  committed(): void {
    const { cache } = this;
    const learned = this.#learned;
    this.#learned = [];
    if (cache.epoch !== this.#epoch || learned.length === 0) return;
    for (const [tenant, add] of learned) {
      if (cache.size >= cache.cap) cache.clear(cache.epoch);
      cache.size += add(cache.tenant(tenant));
    }
  }
}

const caches = new WeakMap<SqliteHandle, NodeCache | null>();
const sessions = new WeakMap<Transaction<Database>, NodeLookups | null>();
let cap: number | undefined;

function cacheOf(db: SqliteHandle): NodeCache | null {
  let c = caches.get(db);
  if (c !== undefined) return c;
  cap ??= nodeCacheFromEnv();
  if (cap === 0) c = null;
  else {
    try {
      c = new NodeCache(cap, db.prepare('select n from access_node_epoch where id = 1').pluck());
    } catch {
      // Not migrated to 18 yet (a migration test's database): no cache on this connection for now.
      return null;
    }
  }
  caches.set(db, c);
  return c;
}

/** The node lookups of transaction `tx` on SQLite connection `db`, or undefined when the cache is off. */
export function lookupsOf(tx: Transaction<Database>, db: SqliteHandle): NodeLookups | undefined {
  let s = sessions.get(tx);
  if (s === undefined) {
    const cache = cacheOf(db);
    s = cache === null ? null : new NodeLookups(cache, cache.epoch);
    sessions.set(tx, s);
  }
  return s ?? undefined;
}

/** What `tx`'s lookups learned, kept by calling the result once `tx` has committed (a no-op without a cache). */
export function keepAfterCommit(tx: Transaction<Database>): () => void {
  const s = sessions.get(tx);
  return s ? () => s.committed() : () => undefined;
}
