/**
 * The linking resources (credential, config, code) of a tenant, held in memory for path searches
 * on SQLite (docs/accessmap.md "Queries").
 *
 * Why: a search walks every access of each level and must know which resources link principals,
 * and how (a credential's identity, a config's or code's class). Probing
 * `access_nodes_linking_idx` for each access was two thirds of the walk at 10,000,000 edges (2–4 µs
 * per access), and reading the rows of the resources it found cost a statement per level; a map
 * lookup in the process costs well under a tenth of that.
 *
 * Exact, not eventually right: the map answers what the connection would read from
 * `access_nodes` at that moment, uncommitted writes of its own transaction included. Triggers
 * (SQLite migration 9) log every linking resource created, changed or gone to
 * `access_linking_changes` in the writer's own transaction, whichever process or code path wrote
 * it; before each use the map applies the rows after the last one it applied. A rollback takes its
 * rows with it and their seq may be reused, so the map remembers the random token of the last row
 * it applied: when that row is gone or carries another token, it drops everything and loads again.
 *
 * Memory: at most `SERVICE_ACCESSMAP_LINKING_IDS` resources per connection (default 1,000,000;
 * about 630 bytes of V8 heap each with short names, the id's number included); a tenant with more
 * is searched with the probe, and 0 turns the map off.
 */
import type { SqliteHandle, SqliteStatement } from '../../store/store-types.js';
import type { GraphNode } from './model.js';
import type { NodeKind, ResourceClass } from './model.js';

export const DEFAULT_LINKING_IDS = 1_000_000;

/** The cap from `SERVICE_ACCESSMAP_LINKING_IDS`; throws on a value that is not an integer in 0..100,000,000. */
export function linkingIdsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SERVICE_ACCESSMAP_LINKING_IDS'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_LINKING_IDS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 100_000_000)
    throw new RangeError(
      `SERVICE_ACCESSMAP_LINKING_IDS must be an integer from 0 to 100000000 (0 turns the in-memory linking set off), got ` +
        `${JSON.stringify(raw)}`,
    );
  return n;
}

let cap: number | undefined;

interface Statements {
  /** the token of the row at a seq, if it is still there */
  tokenAt: SqliteStatement;
  /** the newest row: where a fresh map starts */
  last: SqliteStatement;
  /** rows after a seq, in order */
  since: SqliteStatement;
  /** a tenant's linking resources, from the partial index, at most cap + 1 */
  load: SqliteStatement;
  /** a node's number by tenant and id (the change log names nodes by id; numbers never change) */
  numberOf: SqliteStatement;
}

/** A tenant's linking resources: by number (what a search walks) and, to apply changes, the number of each id. */
interface Nodes {
  byNo: Map<number, GraphNode>;
  noOf: Map<string, number>;
}

interface State {
  /** seq and token of the last change applied (0 and null: none yet) */
  seq: number;
  token: number | null;
  /** per tenant: its linking resources, or null when it has more than the cap allows */
  tenants: Map<string, Nodes | null>;
  /** resources held, over all tenants */
  size: number;
}

const statements = new WeakMap<SqliteHandle, Statements>();
const states = new WeakMap<SqliteHandle, State>();

function statementsOf(db: SqliteHandle): Statements {
  let s = statements.get(db);
  if (s === undefined) {
    s = {
      tokenAt: db.prepare('select token from access_linking_changes where seq = ?').pluck(),
      last: db.prepare('select seq, token from access_linking_changes order by seq desc limit 1').raw(true),
      since: db
        .prepare(
          'select seq, token, tenant_id, linking, node_id, kind, name, class, parent_id from access_linking_changes where seq > ? ' +
            'order by seq',
        )
        .raw(true),
      load: db
        .prepare(
          `select no, id, kind, name, class, parent_id from access_nodes indexed by access_nodes_linking_idx where tenant_id = ? and ` +
            `class in ('credential', 'config', 'code') limit ?`,
        )
        .raw(true),
      numberOf: db.prepare('select no from access_nodes where id = ? and tenant_id = ?').pluck(),
    };
    statements.set(db, s);
  }
  return s;
}

type NodeRow = [id: string, kind: string, name: string, cls: string, parent_id: string | null];

const nodeOf = ([id, kind, name, cls, parent_id]: NodeRow): GraphNode => ({
  id,
  kind: kind as NodeKind,
  name,
  class: cls as ResourceClass,
  parent_id,
});

/** Forgets every tenant and starts from the newest change. */
function reset(state: State, s: Statements): void {
  const last = s.last.get() as [number, number] | undefined;
  state.seq = last?.[0] ?? 0;
  state.token = last?.[1] ?? null;
  state.tenants.clear();
  state.size = 0;
}

/** Brings `state` up to what the connection reads now. */
function sync(state: State, s: Statements): void {
  if (state.token !== null && s.tokenAt.get(state.seq) !== state.token) return reset(state, s);
  for (const row of s.since.iterate(state.seq) as IterableIterator<[number, number, string, number, ...NodeRow]>) {
    const [seq, token, tenant, linking] = row;
    state.seq = seq;
    state.token = token;
    const nodes = state.tenants.get(tenant);
    if (nodes === undefined || nodes === null) continue;
    const node = nodeOf(row.slice(4) as NodeRow);
    const had = nodes.noOf.get(node.id);
    if (had !== undefined) {
      nodes.noOf.delete(node.id);
      nodes.byNo.delete(had);
      state.size -= 1;
    }
    if (linking !== 1) continue;
    // The node as it is now: a row it no longer matches (its id changed again, or it is gone) is
    // followed by the row that says so, which this loop applies before the map is used.
    const no = (had ?? s.numberOf.get(node.id, tenant)) as number | undefined;
    if (no === undefined) continue;
    nodes.noOf.set(node.id, no);
    nodes.byNo.set(no, node);
    state.size += 1;
  }
  // Grown past the cap: forget every tenant; each loads again on its next search (and one that
  // alone has more than the cap is then searched with the probe).
  if (state.size > (cap as number)) {
    state.tenants.clear();
    state.size = 0;
  }
}

/**
 * The linking resources of `tenant` by node number, as the connection `db` reads them now (inside the
 * caller's transaction), or undefined when the map is off or the tenant has more than the cap:
 * then probe `access_nodes_linking_no` (migration 13). The map is the connection's and changes with its next
 * use: do not keep it past the statement it serves.
 */
export function linkingNodes(db: SqliteHandle, tenant: string): ReadonlyMap<number, GraphNode> | undefined {
  cap ??= linkingIdsFromEnv();
  if (cap === 0) return undefined;
  const s = statementsOf(db);
  let state = states.get(db);
  if (state === undefined) {
    state = { seq: 0, token: null, tenants: new Map(), size: 0 };
    reset(state, s);
    states.set(db, state);
  } else sync(state, s);
  const known = state.tenants.get(tenant);
  if (known !== undefined) return known?.byNo;
  const rows = s.load.all(tenant, cap + 1) as Array<[number, ...NodeRow]>;
  if (rows.length > cap) {
    state.tenants.set(tenant, null);
    return undefined;
  }
  // Room for this tenant: forget the others first (a search reloads its tenant on its next use).
  if (state.size + rows.length > cap) {
    state.tenants.clear();
    state.size = 0;
  }
  const nodes: Nodes = { byNo: new Map(), noOf: new Map() };
  for (const [no, ...row] of rows) {
    nodes.byNo.set(no, nodeOf(row));
    nodes.noOf.set(row[0], no);
  }
  state.tenants.set(tenant, nodes);
  state.size += nodes.byNo.size;
  return nodes.byNo;
}
