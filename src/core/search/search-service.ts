/**
 * `GET /v1/search`: one query across the kinds the caller may read: agents (name, external id),
 * workspaces (display name, root path) and, for callers allowed privileged graph reads (editor
 * and above), the access graph's sessions, identities and resources (name, natural key).
 * Case-insensitive substring match; at most `limit` hits, agents first, then workspaces, then nodes.
 */
import { sql } from 'kysely';
import type { Store } from '../../store/store-types.js';

export type SearchKind = 'agent' | 'workspace' | 'session' | 'identity' | 'resource';

export interface SearchHit {
  kind: SearchKind;
  id: string;
  name: string;
  /** what matched besides the name: external id, root path, natural key */
  detail: string;
}

/** `%` and `_` in the user's text match themselves, not any character. */
function likePattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Searches one tenant; `graph` says whether graph nodes may be included. */
export async function search(
  store: Store,
  tenant: string,
  q: string,
  opts: { limit: number; graph: boolean },
): Promise<{ items: SearchHit[]; has_more: boolean; kinds: SearchKind[] }> {
  const pattern = likePattern(q);
  const like = (col: string) => sql<boolean>`lower(${sql.ref(col)}) like ${pattern} escape '\\'`;
  const want = opts.limit + 1;
  return store.withTenant(tenant, async (tx) => {
    const hits: SearchHit[] = [];
    const agents = await tx
      .selectFrom('agents')
      .select(['id', 'name', 'external_id'])
      .where('tenant_id', '=', tenant)
      .where((eb) => eb.or([like('name'), like('external_id')]))
      .orderBy('id')
      .limit(want)
      .execute();
    hits.push(...agents.map((a) => ({ kind: 'agent' as const, id: a.id, name: a.name, detail: a.external_id })));
    if (hits.length < want) {
      const ws = await tx
        .selectFrom('workspaces')
        .select(['id', 'display_name', 'root_path'])
        .where('tenant_id', '=', tenant)
        .where((eb) => eb.or([like('display_name'), like('root_path')]))
        .orderBy('id')
        .limit(want - hits.length)
        .execute();
      hits.push(...ws.map((w) => ({ kind: 'workspace' as const, id: w.id, name: w.display_name, detail: w.root_path })));
    }
    if (opts.graph && hits.length < want) {
      const nodes = await tx
        .selectFrom('access_nodes')
        .select(['id', 'kind', 'name', 'ref'])
        .where('tenant_id', '=', tenant)
        .where((eb) => eb.or([like('name'), like('ref')]))
        .orderBy('id')
        .limit(want - hits.length)
        .execute();
      hits.push(...nodes.map((n) => ({ kind: n.kind as SearchKind, id: n.id, name: n.name, detail: n.ref })));
    }
    const kinds: SearchKind[] = ['agent', 'workspace', ...(opts.graph ? (['session', 'identity', 'resource'] as const) : [])];
    return { items: hits.slice(0, opts.limit), has_more: hits.length > opts.limit, kinds };
  });
}
