/**
 * Neighbours of one node: its access edges (a principal's outgoing, a resource's incoming), paged
 * in the order the edges were stored (`seq`, migration 14: the resource index's own order), plus
 * on the first page its structural links (an agent's sessions, a session's agent,
 * a credential's identity, an identity's credentials).
 */
import { sql } from 'kysely';
import { errors } from '../../contract/errors.js';
import type { Store } from '../../store/store-types.js';
import { decodeSeqCursor, encodeSeqCursor } from '../../contract/cursor.js';
import { edgeSource, toEdge, type Page } from './edge-query.js';
import type { AccessEdge, NodeKind } from './model.js';
import { toView, type GraphNodeView } from './node-store.js';
import { withFolded } from './recent-edges.js';
import { numbersOf, tenantCheck } from './node-lookup.js';

export type Direction = 'outgoing' | 'incoming' | 'both';

export interface StructuralLink {
  relation: 'runs' | 'authenticates_as';
  direction: 'outgoing' | 'incoming';
  node: GraphNodeView;
}

export interface NeighborsResult extends Page<AccessEdge> {
  node: GraphNodeView;
  links: StructuralLink[];
}

/** Finds a node by id (and kind, when given); 400 when the id names nodes of two kinds and no kind was given. */
export async function findNode(store: Store, tenant: string, id: string, kind?: NodeKind): Promise<GraphNodeView> {
  return store.withTenant(tenant, async (tx) => {
    const found: GraphNodeView[] = [];
    if (!kind || kind === 'agent') {
      const a = await tx
        .selectFrom('agents')
        .select(['id', 'name', 'external_id'])
        .where('tenant_id', '=', tenant)
        .where('id', '=', id)
        .executeTakeFirst();
      if (a) found.push({ id: a.id, kind: 'agent', ref: a.external_id, name: a.name, class: null, parent_id: null });
    }
    if (kind !== 'agent') {
      let q = tx
        .selectFrom('access_nodes')
        .select(['id', 'kind', 'ref', 'name', 'class', 'parent_id'])
        .where('tenant_id', '=', tenant)
        .where('id', '=', id);
      if (kind) q = q.where('kind', '=', kind);
      for (const n of await q.execute()) found.push(toView(n));
    }
    if (found.length === 0) throw errors.notFound(kind ?? 'node');
    if (found.length > 1) throw errors.badRequest(`id ${id} names nodes of kinds ${found.map((n) => n.kind).join(', ')}; pass kind`);
    return found[0] as GraphNodeView;
  });
}

/** One page of a node's neighbours. */
export async function neighbors(
  store: Store,
  tenant: string,
  q: { id: string; kind?: NodeKind; direction: Direction; limit: number; cursor?: string },
): Promise<NeighborsResult> {
  const node = await findNode(store, tenant, q.id, q.kind);
  const out = q.direction !== 'incoming';
  const inc = q.direction !== 'outgoing';
  return withFolded(store, tenant, async (tx) => {
    // One keyset query per side (each reads its own index) merged by seq: an OR across the two
    // columns would make the database scan the tenant's edges.
    const after = q.cursor ? sql` and e.seq > ${decodeSeqCursor(q.cursor)}` : sql``;
    // By the node's number (migration 10): the key for its outgoing edges, the resource index for
    // its incoming ones; the tenant and the id are checked on the rows found.
    const no = (await numbersOf(tx, tenant, [node.id])).get(node.id) ?? -1;
    const side = (end: 'origin' | 'resource') =>
      sql<
        Parameters<typeof toEdge>[0]
      >`${edgeSource(tenant, { [`${end}_no`]: no })} where ${tenantCheck('e.tenant_id', tenant)} and e.${sql.raw(end)}_no = ${no} and
        e.${sql.raw(end)}_id = ${node.id}${after} order by e.seq limit ${q.limit + 1}`.execute(
        tx,
      );
    const parts = [...(out ? [await side('origin')] : []), ...(inc ? [await side('resource')] : [])];
    const merged = new Map<string, Parameters<typeof toEdge>[0]>();
    for (const p of parts) for (const r of p.rows) merged.set(r.id, r);
    const res = { rows: [...merged.values()].sort((a, b) => Number(a.seq) - Number(b.seq)).slice(0, q.limit + 1) };
    const ids = [...new Set(res.rows.flatMap((r) => [r.origin_id, r.resource_id]))];
    const names = new Map<string, string>();
    if (ids.length > 0) {
      for (const a of await tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenant).where('id', 'in', ids).execute())
        names.set(a.id, a.name);
      for (const n of await tx
        .selectFrom('access_nodes')
        .select(['id', 'name'])
        .where('tenant_id', '=', tenant)
        .where('id', 'in', ids)
        .execute())
        names.set(n.id, n.name);
    }
    const edges = res.rows.map((r) => toEdge(r, names));
    const more = edges.length > q.limit;
    const items = more ? edges.slice(0, q.limit) : edges;
    const links: StructuralLink[] = [];
    if (!q.cursor) {
      const cols = ['id', 'kind', 'ref', 'name', 'class', 'parent_id'] as const;
      const childrenWanted = (node.kind === 'agent' && out) || (node.kind === 'identity' && inc);
      if (childrenWanted) {
        const relation = node.kind === 'agent' ? 'runs' : 'authenticates_as';
        // Materialized (as edgeSource): for `order by id` the planner would otherwise walk
        // (tenant_id, id) and filter every node of the tenant instead of seeking access_nodes_parent_idx.
        const children = await sql<Parameters<typeof toView>[0]>`
          with kids as materialized (select ${sql.join(cols.map((c) => sql.ref(c)))} from access_nodes where tenant_id = ${tenant} and
            parent_id = ${node.id})
          select * from kids order by id limit 1000`.execute(tx);
        for (const c of children.rows) {
          // An agent runs its sessions (outgoing); an identity's credentials point at it (incoming).
          links.push({ relation, direction: relation === 'runs' ? 'outgoing' : 'incoming', node: toView(c) });
        }
      }
      const parentWanted = (node.kind === 'session' && inc) || (node.kind === 'resource' && out);
      if (node.parent_id && parentWanted) {
        const p =
          node.kind === 'session'
            ? await tx
                .selectFrom('agents')
                .select(['id', 'name', 'external_id'])
                .where('tenant_id', '=', tenant)
                .where('id', '=', node.parent_id)
                .executeTakeFirst()
                .then((a) =>
                  a ? { id: a.id, kind: 'agent' as const, ref: a.external_id, name: a.name, class: null, parent_id: null } : undefined,
                )
            : await tx
                .selectFrom('access_nodes')
                .select(cols)
                .where('tenant_id', '=', tenant)
                .where('id', '=', node.parent_id)
                .executeTakeFirst()
                .then((n) => (n ? toView(n) : undefined));
        if (p)
          links.push({
            relation: node.kind === 'session' ? 'runs' : 'authenticates_as',
            direction: node.kind === 'session' ? 'incoming' : 'outgoing',
            node: p,
          });
      }
    }
    const last = res.rows[items.length - 1];
    return { node, links, items, has_more: more, ...(more && last ? { cursor: encodeSeqCursor(last.seq) } : {}) };
  });
}
