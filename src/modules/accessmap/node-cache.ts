/**
 * What ingest already knows about nodes, held in memory on SQLite (docs/accessmap.md "The node
 * cache").
 *
 * Why: every observation names an origin and a resource, and a batch resolves each (an agent by id
 * or external id, a session, identity or resource by id or natural key) before its edges are
 * stored. At 1,000,000 nodes those lookups missed SQLite's page cache, as each merge of the recent
 * level cycled it through the edge indexes, and cost a batch of 5,000 observations about as much
 * as appending it. Nodes are looked up far more often than they change, so the facts a lookup
 * returned are kept and the next batch asks the database only about nodes it has not met.
 *
 * Exact, not eventually right. The cache holds only facts that something exists (this id is a
 * resource; this ref of this kind is that id; this agent exists; this external id is that agent),
 * so it can be wrong in two ways only, and both are closed (SQLite migration 10):
 *
 * - A node goes away or changes its id, tenant, kind, ref or external id: triggers log it to
 *   `access_node_changes` in the writer's own transaction, whoever the writer is; before each use
 *   the cache drops the facts the rows after the last one it applied name. A rollback takes its
 *   rows with it and their seq may be handed out again, so the cache keeps the random token of the
 *   last row it applied and starts over when that row is gone or carries another token.
 * - A fact came from a write that did not last (a node created, or read, in a transaction or
 *   savepoint later rolled back): before adding facts the cache writes a fresh token into its own
 *   row of `access_node_cache_marks` in the same transaction; a rollback that undoes the fact's
 *   basis undoes that write too (it came later), and the next use, finding another token,
 *   starts over.
 *
 * Starting over costs the lookups again, once. Memory: at most `SERVICE_ACCESSMAP_NODE_CACHE`
 * facts per connection (default 1,000,000, about 150 bytes each); a full cache keeps what it has
 * and sends the rest to the database. 0 turns it off. PostgreSQL has none (several processes may
 * write; a batch resolves each kind in one round trip there).
 */
import { randomInt } from 'node:crypto';
import type { SqliteHandle, SqliteStatement } from '../../store/store.js';

export const DEFAULT_NODE_CACHE = 1_000_000;

/** The cap from `SERVICE_ACCESSMAP_NODE_CACHE`; throws on a value that is not an integer in 0..100,000,000. */
export function nodeCacheFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_ACCESSMAP_NODE_CACHE'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_NODE_CACHE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 100_000_000) throw new RangeError(`SERVICE_ACCESSMAP_NODE_CACHE must be an integer from 0 to 100000000 (0 turns the node cache off), got ${JSON.stringify(raw)}`);
  return n;
}

let cap: number | undefined;

/** One tenant's facts. Read them only through {@link nodeFacts} and add them only through {@link rememberFacts}. */
export interface TenantFacts {
  /** access nodes (not agents): id → kind */
  readonly nodes: Map<string, string>;
  /** access nodes: `kind \n ref` → id */
  readonly refs: Map<string, string>;
  /** agents that exist */
  readonly agents: Set<string>;
  /** agents: external id → id */
  readonly externals: Map<string, string>;
}

interface Statements {
  tokenAt: SqliteStatement;
  last: SqliteStatement;
  since: SqliteStatement;
  markGet: SqliteStatement;
  markSet: SqliteStatement;
}

interface State {
  /** seq and token of the last change applied (0 and null: none yet) */
  seq: number;
  token: number | null;
  /** this cache's row in access_node_cache_marks, and the token it last wrote there (null: none yet) */
  readonly markId: number;
  mark: number | null;
  tenants: Map<string, TenantFacts>;
  /** facts held, over all tenants */
  size: number;
}

const statements = new WeakMap<SqliteHandle, Statements>();
const states = new WeakMap<SqliteHandle, State>();

function statementsOf(db: SqliteHandle): Statements {
  let s = statements.get(db);
  if (s === undefined) {
    s = {
      tokenAt: db.prepare('select token from access_node_changes where seq = ?').pluck(),
      last: db.prepare('select seq, token from access_node_changes order by seq desc limit 1').raw(true),
      since: db.prepare('select seq, token, tenant_id, node_id, kind, ref from access_node_changes where seq > ? order by seq').raw(true),
      markGet: db.prepare('select token from access_node_cache_marks where id = ?').pluck(),
      markSet: db.prepare('insert into access_node_cache_marks (id, token) values (?, ?) on conflict (id) do update set token = excluded.token'),
    };
    statements.set(db, s);
  }
  return s;
}

const sizeOf = (f: TenantFacts): number => f.nodes.size + f.refs.size + f.agents.size + f.externals.size;

/** Forgets every fact and starts from the newest change. */
function reset(state: State, s: Statements): void {
  const last = s.last.get() as [number, number] | undefined;
  state.seq = last?.[0] ?? 0;
  state.token = last?.[1] ?? null;
  state.mark = null;
  state.tenants.clear();
  state.size = 0;
}

/** Brings `state` up to what the connection reads now. */
function sync(state: State, s: Statements): void {
  if (state.mark !== null && s.markGet.get(state.markId) !== state.mark) return reset(state, s);
  if (state.token !== null && s.tokenAt.get(state.seq) !== state.token) return reset(state, s);
  for (const [seq, token, tenant, id, kind, ref] of s.since.iterate(state.seq) as IterableIterator<[number, number, string, string, string, string]>) {
    state.seq = seq;
    state.token = token;
    const f = state.tenants.get(tenant);
    if (f === undefined) continue;
    const before = sizeOf(f);
    if (kind === 'agent') {
      f.agents.delete(id);
      if (f.externals.get(ref) === id) f.externals.delete(ref);
    } else {
      f.nodes.delete(id);
      const key = `${kind}\n${ref}`;
      if (f.refs.get(key) === id) f.refs.delete(key);
    }
    state.size -= before - sizeOf(f);
  }
}

function stateOf(db: SqliteHandle): { state: State; s: Statements } {
  const s = statementsOf(db);
  let state = states.get(db);
  if (state === undefined) {
    state = { seq: 0, token: null, markId: randomInt(1, 2 ** 48), mark: null, tenants: new Map(), size: 0 };
    reset(state, s);
    states.set(db, state);
  }
  return { state, s };
}

/**
 * What the cache knows of `tenant`, as the connection `db` reads the database now (inside the
 * caller's transaction), or undefined when the cache is off. Facts missing here are not false:
 * ask the database, then {@link rememberFacts} what it answered. Do not keep the result past the
 * lookup it serves.
 */
export function nodeFacts(db: SqliteHandle, tenant: string): TenantFacts | undefined {
  cap ??= nodeCacheFromEnv();
  if (cap === 0) return undefined;
  const { state, s } = stateOf(db);
  sync(state, s);
  let f = state.tenants.get(tenant);
  if (f === undefined) state.tenants.set(tenant, (f = { nodes: new Map(), refs: new Map(), agents: new Set(), externals: new Map() }));
  return f;
}

/**
 * Adds facts of `tenant` that the connection `db` has just read or written (inside the caller's
 * transaction): `add` puts them into the tenant's maps. Marks the transaction first, so that a
 * rollback of it makes the next use start over. Does nothing when the cache is off or full.
 */
export function rememberFacts(db: SqliteHandle, tenant: string, add: (f: TenantFacts) => void): void {
  cap ??= nodeCacheFromEnv();
  if (cap === 0) return;
  const { state, s } = stateOf(db);
  if (state.size >= cap) return;
  sync(state, s);
  const mark = randomInt(1, 2 ** 48);
  s.markSet.run(state.markId, mark);
  state.mark = mark;
  let f = state.tenants.get(tenant);
  if (f === undefined) state.tenants.set(tenant, (f = { nodes: new Map(), refs: new Map(), agents: new Set(), externals: new Map() }));
  const before = sizeOf(f);
  add(f);
  state.size += sizeOf(f) - before;
}
