/**
 * The attack-path summary: graph size, drift counts, the links attack paths are made of, and the
 * agents with the most escalation targets. Escalation is evaluated for at most `maxAgents` agents
 * within `budgetMs`; the answer says how many were evaluated, so a partial answer is never
 * mistaken for a complete one.
 */
import { sql } from 'kysely';
import type { Store } from '../../store/store-types.js';
import { escalation, MAX_BUDGET, reachability } from './attack-paths.js';
import { storeGraphSource } from './graph-source.js';
import { withFolded } from './recent-edges.js';

export interface Summary {
  nodes: { agents: number; sessions: number; identities: number; resources: number; resources_by_class: Record<string, number> };
  edges: { total: number; permitted: number; observed: number; permitted_and_observed: number };
  drift: { unexpected: number; unused: number };
  attack_surface: {
    /** access edges onto credential resources (each lets its principal act as an identity) */
    credential_accesses: number;
    /** write edges onto config/code resources that another principal reads */
    control_writes: number;
  };
  escalation: {
    agents_total: number;
    agents_evaluated: number;
    agents_with_paths: number;
    complete: boolean;
    top: Array<{ agent: { id: string; name: string }; targets: number; shortest: number; reachable_resources: number }>;
  };
}

const n = (v: unknown): number => Number(v ?? 0);

/** Computes the summary of one tenant's graph. */
export async function attackPathSummary(
  store: Store,
  tenant: string,
  opts: { maxAgents?: number; budgetMs?: number; top?: number } = {},
): Promise<Summary> {
  const maxAgents = opts.maxAgents ?? 100;
  const budgetMs = opts.budgetMs ?? 2_000;
  const started = Date.now();
  return withFolded(store, tenant, async (tx) => {
    const agents = await tx.selectFrom('agents').select(['id', 'name']).where('tenant_id', '=', tenant).orderBy('id').execute();
    const kinds = await sql<{
      kind: string;
      class: string;
      c: string | number;
    }>`select kind, class, count(*) as c from access_nodes where tenant_id = ${tenant} group by kind, class`.execute(tx);
    const byKind: Record<string, number> = {};
    const byClass: Record<string, number> = {};
    for (const r of kinds.rows) {
      byKind[r.kind] = (byKind[r.kind] ?? 0) + n(r.c);
      if (r.kind === 'resource') byClass[r.class] = n(r.c);
    }
    const e = (
      await sql<{ total: unknown; permitted: unknown; observed: unknown; both: unknown }>`
        select count(*) as total, sum(permitted) as permitted,
               sum(case when observed_count > 0 then 1 else 0 end) as observed,
               sum(case when observed_count > 0 and permitted = 1 then 1 else 0 end) as both
        from access_edges where tenant_id = ${tenant}`.execute(tx)
    ).rows[0];
    const d = (
      await sql<{ unexpected: unknown; unused: unknown }>`
        select
          sum(case when e.observed_count > 0 and not exists (select 1 from access_edges p where p.origin_no = e.origin_no and
            p.resource_no = e.resource_no and p.permitted = 1 and (p.mode = e.mode or p.mode = 'rw')) then 1 else 0 end) as unexpected,
          sum(case when e.permitted = 1 and not exists (select 1 from access_edges o where o.origin_no = e.origin_no and o.resource_no
            = e.resource_no and o.observed_count > 0 and (o.mode = e.mode or o.mode = 'rw')) then 1 else 0 end) as unused
        from access_edges e where e.tenant_id = ${tenant}`.execute(tx)
    ).rows[0];
    const s = (
      await sql<{ cred: unknown; ctrl: unknown }>`
        select
          (select count(*) from access_edges e join access_nodes r on r.tenant_id = e.tenant_id and r.id = e.resource_id
            where e.tenant_id = ${tenant} and r.class = 'credential') as cred,
          (select count(*) from access_edges e join access_nodes r on r.tenant_id = e.tenant_id and r.id = e.resource_id
            where e.tenant_id = ${tenant} and e.mode = 'rw' and r.class in ('config', 'code')
              and exists (select 1 from access_edges o where o.resource_no = e.resource_no and o.origin_no <> e.origin_no)) as
                ctrl`.execute(
        tx,
      )
    ).rows[0];
    const src = storeGraphSource(tx, tenant, store.sqlite?.handle(tx));
    const evaluated: Summary['escalation']['top'] = [];
    let withPaths = 0;
    for (const a of agents.slice(0, maxAgents)) {
      if (Date.now() - started > budgetMs) break;
      const esc = await escalation(src, a.id, { maxDepth: 4, maxNodes: 5_000, limit: 1_000, budget: MAX_BUDGET });
      if (esc.targets.length === 0) {
        evaluated.push({ agent: a, targets: 0, shortest: 0, reachable_resources: 0 });
        continue;
      }
      withPaths++;
      const reach = await reachability(src, a.id, { maxDepth: 4, maxNodes: 5_000, limit: 0, budget: MAX_BUDGET });
      evaluated.push({
        agent: a,
        targets: esc.targets.length,
        shortest: esc.targets[0]?.path.length ?? 0,
        reachable_resources: reach.total ?? reach.total_at_least,
      });
    }
    const top = evaluated
      .filter((x) => x.targets > 0)
      .sort((x, y) => y.targets - x.targets || y.reachable_resources - x.reachable_resources || (x.agent.id < y.agent.id ? -1 : 1))
      .slice(0, opts.top ?? 10);
    return {
      nodes: {
        agents: agents.length,
        sessions: byKind['session'] ?? 0,
        identities: byKind['identity'] ?? 0,
        resources: byKind['resource'] ?? 0,
        resources_by_class: byClass,
      },
      edges: { total: n(e?.total), permitted: n(e?.permitted), observed: n(e?.observed), permitted_and_observed: n(e?.both) },
      drift: { unexpected: n(d?.unexpected), unused: n(d?.unused) },
      attack_surface: { credential_accesses: n(s?.cred), control_writes: n(s?.ctrl) },
      escalation: {
        agents_total: agents.length,
        agents_evaluated: evaluated.length,
        agents_with_paths: withPaths,
        complete: evaluated.length === agents.length,
        top,
      },
    };
  });
}
