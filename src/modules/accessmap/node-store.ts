/**
 * Graph nodes: agents live in `agents`; sessions, identities and resources in `access_nodes`,
 * addressed by UUIDv7 id or by the source's natural key (`ref`, unique per tenant and kind).
 */
import type { Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import { nowTimestamp } from '../../ledger/time.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { SqliteHandle, Store } from '../../store/store-types.js';
import { assertTenantWritable } from '../../http/request-scope.js';
import { chunks } from './chunks.js';
import type { NodeKind, ResourceClass } from './model.js';
import { agentsByExternalId, agentsById, learnCreated, nodesById, nodesByRef, takeNumbers } from './node-lookup.js';

/** A node reference in a write: an id, or a natural key (created on first sight). */
export interface NodeSpec {
  id?: string;
  ref?: string;
  name?: string;
  /** resources: what the resource is to its readers; default `data` */
  class?: ResourceClass;
  /** sessions: the agent running it; credential resources: the identity it authenticates as */
  parent_id?: string | null;
}

/** A node as served. */
export interface GraphNodeView {
  id: string;
  kind: NodeKind;
  ref: string;
  name: string;
  class: ResourceClass | null;
  parent_id: string | null;
}

type Tx = Transaction<Database>;

/** A node as the write paths resolve it: its id and its number (migration 10). */
export interface ResolvedNode {
  id: string;
  no: number;
}

/**
 * Resolves node specs of one kind to ids and numbers, creating unknown refs in bulk (with a block
 * of fresh numbers); agents resolve by id or by `external_id` and are never created here. Returns
 * them in input order. `db`: the SQLite connection under `tx`, when there is one (node-lookup.ts).
 */
export async function resolveNodes(tx: Tx, tenant: string, kind: NodeKind, specs: NodeSpec[], db?: SqliteHandle): Promise<ResolvedNode[]> {
  if (kind === 'agent') return resolveAgents(tx, tenant, specs, db);
  const out: ResolvedNode[] = new Array(specs.length);
  const byRef = new Map<string, number[]>();
  const byId: Array<[string, number]> = [];
  specs.forEach((s, i) => {
    if (s.id) byId.push([s.id, i]);
    else if (s.ref) {
      // Pushed, not copied: a batch that names one ref thousands of times stays linear.
      const places = byRef.get(s.ref);
      if (places === undefined) byRef.set(s.ref, [i]);
      else places.push(i);
    } else throw errors.badRequest(`a ${kind} needs an id or a ref`);
  });
  if (byId.length > 0) {
    const ids = [...new Set(byId.map(([id]) => id))];
    const found = new Map<string, ResolvedNode>();
    for (const r of await nodesById(tx, db, tenant, ids)) if (r.kind === kind) found.set(r.id, { id: r.id, no: r.no });
    for (const [id, i] of byId) {
      const n = found.get(id);
      if (n === undefined) throw errors.notFound(`${kind} ${id}`);
      out[i] = n;
    }
  }
  if (byRef.size > 0) {
    const refs = [...byRef.keys()];
    const known = new Map<string, ResolvedNode>();
    for (const r of await nodesByRef(tx, db, tenant, kind, refs)) known.set(r.ref, { id: r.id, no: r.no });
    const now = nowTimestamp();
    const unknown = refs.filter((r) => !known.has(r));
    const numbers = await takeNumbers(tx, db, unknown.length);
    const fresh = unknown.map((ref, j) => {
      const spec = specs[(byRef.get(ref) as number[])[0] as number] as NodeSpec;
      const row = {
        id: newId(),
        tenant_id: tenant,
        kind,
        ref,
        name: spec.name ?? ref,
        class: kind === 'resource' ? (spec.class ?? 'data') : '',
        parent_id: spec.parent_id ?? null,
        created_at: now,
        no: numbers[j] as number,
      };
      known.set(ref, { id: row.id, no: row.no });
      return row;
    });
    if (db !== undefined) {
      for (const chunk of chunks(fresh, 400)) await tx.insertInto('access_nodes').values(chunk).execute();
      learnCreated(tx, db, tenant, fresh);
    } else {
      // Concurrent writers (other requests, other replicas) may introduce the same refs: insert what
      // is still absent, then take the winner's row for each ref another transaction committed first.
      await insertOrAdopt(tx, tenant, kind, fresh, known);
    }
    for (const [ref, idx] of byRef) for (const i of idx) out[i] = known.get(ref) as ResolvedNode;
  }
  return out;
}

/**
 * Postgres: `insert … on conflict (tenant_id, kind, ref) do nothing returning ref` in ref order (so
 * two writers lock the keys in one order and never deadlock), then one lookup of the refs another
 * transaction created meanwhile (the insert waited for it to commit, so a new statement sees its
 * row under read committed). A unique violation never reaches the caller; the numbers taken for
 * the lost rows are a gap in the sequence, as a rollback leaves.
 */
async function insertOrAdopt(
  tx: Tx,
  tenant: string,
  kind: NodeKind,
  fresh: Array<{ ref: string; no: number; id: string } & Record<string, unknown>>,
  known: Map<string, ResolvedNode>,
): Promise<void> {
  const sorted = [...fresh].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  const lost: string[] = [];
  for (const chunk of chunks(sorted, 400)) {
    const won = new Set(
      (
        await tx
          .insertInto('access_nodes')
          .values(chunk as never)
          .onConflict((oc) => oc.columns(['tenant_id', 'kind', 'ref']).doNothing())
          .returning('ref')
          .execute()
      ).map((r) => r.ref),
    );
    for (const r of chunk) if (!won.has(r.ref)) lost.push(r.ref);
  }
  if (lost.length === 0) return;
  const adopted = await nodesByRef(tx, undefined, tenant, kind, lost);
  for (const r of adopted) known.set(r.ref, { id: r.id, no: r.no });
  if (adopted.length !== lost.length) throw new Error(`${lost.length - adopted.length} access node ref(s) neither inserted nor found`);
}

async function resolveAgents(tx: Tx, tenant: string, specs: NodeSpec[], db: SqliteHandle | undefined): Promise<ResolvedNode[]> {
  const ids = [...new Set(specs.filter((s) => s.id).map((s) => s.id as string))];
  const refs = [...new Set(specs.filter((s) => !s.id && s.ref).map((s) => s.ref as string))];
  const found = new Map<string, ResolvedNode>();
  const byExternal = new Map<string, ResolvedNode>();
  for (const r of await agentsById(tx, db, tenant, ids)) found.set(r.id, { id: r.id, no: r.no });
  for (const r of await agentsByExternalId(tx, db, tenant, refs)) byExternal.set(r.external_id, { id: r.id, no: r.no });
  return specs.map((s) => {
    const a = s.id ? found.get(s.id) : s.ref ? byExternal.get(s.ref) : undefined;
    // Agents are registered through /v1/agents; an observation cannot invent one.
    if (!a) throw errors.notFound(`agent ${s.id ?? s.ref ?? '(no id or ref)'}`);
    return a;
  });
}

/** Creates or updates nodes by natural key: name, class and parent follow the latest write. */
export async function upsertNodes(
  tx: Tx,
  tenant: string,
  kind: Exclude<NodeKind, 'agent'>,
  specs: Array<NodeSpec & { ref: string }>,
  db?: SqliteHandle,
): Promise<GraphNodeView[]> {
  const ids = (
    await resolveNodes(
      tx,
      tenant,
      kind,
      specs.map((s) => ({ ref: s.ref, name: s.name, class: s.class, parent_id: s.parent_id })),
      db,
    )
  ).map((n) => n.id);
  const out: GraphNodeView[] = [];
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i] as NodeSpec & { ref: string };
    const id = ids[i] as string;
    const set: { name?: string; class?: string; parent_id?: string | null } = {};
    if (s.name !== undefined) set.name = s.name;
    if (kind === 'resource' && s.class !== undefined) set.class = s.class;
    if (s.parent_id !== undefined) set.parent_id = s.parent_id;
    if (Object.keys(set).length > 0)
      await tx.updateTable('access_nodes').set(set).where('tenant_id', '=', tenant).where('id', '=', id).execute();
  }
  for (const chunk of chunks(ids, 500)) {
    const rows = await tx
      .selectFrom('access_nodes')
      .select(['id', 'kind', 'ref', 'name', 'class', 'parent_id'])
      .where('tenant_id', '=', tenant)
      .where('id', 'in', chunk)
      .execute();
    for (const r of rows) out.push(toView(r));
  }
  const order = new Map(ids.map((id, i) => [id, i]));
  return out.sort((a, b) => (order.get(a.id) as number) - (order.get(b.id) as number));
}

/** Serves a stored node row. */
export function toView(r: { id: string; kind: string; ref: string; name: string; class: string; parent_id: string | null }): GraphNodeView {
  return {
    id: r.id,
    kind: r.kind as NodeKind,
    ref: r.ref,
    name: r.name,
    class: r.class === '' ? null : (r.class as ResourceClass),
    parent_id: r.parent_id,
  };
}

export { chunks } from './chunks.js';

/** Upserts nodes of any kind from one request, checking each parent: a session's is an agent, a credential's an identity. */
export async function writeNodes(
  store: Store,
  tenant: string,
  nodes: Array<NodeSpec & { kind: Exclude<NodeKind, 'agent'>; ref: string }>,
): Promise<GraphNodeView[]> {
  return store.withTenant(tenant, async (tx) => {
    await assertTenantWritable(tx, tenant);
    for (const n of nodes) {
      if (!n.parent_id) continue;
      if (n.kind === 'session') {
        const a = await tx
          .selectFrom('agents')
          .select('id')
          .where('tenant_id', '=', tenant)
          .where('id', '=', n.parent_id)
          .executeTakeFirst();
        if (!a) throw errors.notFound(`agent ${n.parent_id} (parent of session ${n.ref})`);
      } else if (n.kind === 'resource' && (n.class === 'credential' || n.class === undefined)) {
        const i = await tx
          .selectFrom('access_nodes')
          .select('id')
          .where('tenant_id', '=', tenant)
          .where('kind', '=', 'identity')
          .where('id', '=', n.parent_id)
          .executeTakeFirst();
        if (!i) throw errors.notFound(`identity ${n.parent_id} (parent of credential ${n.ref})`);
      } else {
        throw errors.badRequest(
          `only sessions (their agent) and credential resources (their identity) have a parent; ${n.kind} ${n.ref} cannot`,
        );
      }
    }
    const out: GraphNodeView[] = [];
    // One kind at a time: resolution and upsert are batched per kind.
    for (const kind of ['identity', 'session', 'resource'] as const) {
      const mine = nodes.filter((n) => n.kind === kind);
      if (mine.length > 0) out.push(...(await upsertNodes(tx, tenant, kind, mine, store.sqlite?.handle(tx))));
    }
    return out;
  });
}
