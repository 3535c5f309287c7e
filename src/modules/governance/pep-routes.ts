/** Routes of the policy decision endpoint for agent tool hooks, its decision log and the kill switches. */
import { route, type AnyRoute } from '../../contract/route.js';
import { ApiError } from '../../contract/errors.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { nowTimestamp } from '../../ledger/time.js';
import { decideHook } from './pep-service.js';
import { engageKillSwitch, engageScope, listKillSwitches, releaseKillSwitch, releaseScope } from './kill-switch.js';
import type { Static } from 'typebox';
import {
  PepDecisionRecord,
  HookBody,
  KillSwitch,
  KillSwitchBody,
  KillSwitchList,
  KillSwitchReleaseBody,
  PepDecision,
  PepDecisionListQuery,
  PepDecisionPage,
} from './pep-schemas.js';

const common = { stability: 'beta' as const, tags: ['governance'] };
const BASE = '/v1/m/governance/pep';

type Rec = Record<string, unknown>;

export const pepRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/decisions`,
    operationId: 'decideToolCall',
    summary:
      'Decide an agent tool call from its hook JSON: allow, deny or ask, with the reason, the deciding policy revision and a decision ' +
      'id (each decision a ledger record)',
    permission: 'governance:pep:write',
    audit: 'pep.decision',
    body: HookBody,
    response: PepDecision,
    bodyLimit: 256 * 1024,
    handler: (ctx) => decideHook(ctx, ctx.body),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/decisions`,
    operationId: 'listToolCallDecisions',
    summary: 'Recent decisions from the ledger (default: the last hour), filtered by decision, tool, session or agent',
    permission: 'governance:pep:read',
    privileged: true,
    audit: 'pep.decisions.read',
    query: PepDecisionListQuery,
    response: PepDecisionPage,
    handler: async (ctx) => {
      const ledger = ctx.services.ledger;
      if (!ledger) throw new ApiError('not_configured', 'the audit ledger is not configured on this server');
      const tenant = tenantOf(ctx);
      const q = ctx.query;
      const limit = q.limit ?? 50;
      const since = q.since ?? new Date(Date.now() - 3600_000).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
      const items: Array<Static<typeof PepDecisionRecord>> = [];
      let from = q.cursor ? Number(q.cursor) : 1;
      let more = true;
      // Filters on the decision's fields are applied to the records read; a few pages at most per call.
      for (let pages = 0; pages < 20 && more && items.length <= limit; pages++) {
        const page = await ledger.read(tenant, from, 500, { action: 'pep.decision', since, until: nowTimestamp() });
        for (const r of page.items) {
          from = r.seq + 1;
          const m = JSON.parse(r.meta ?? '{}') as Rec;
          if (
            (q.decision && m['decision'] !== q.decision) ||
            (q.tool_name && m['tool_name'] !== q.tool_name) ||
            (q.session_id && m['session_id'] !== q.session_id) ||
            (q.agent_id && m['agent_id'] !== q.agent_id)
          )
            continue;
          items.push({
            decision_id: r.target_id,
            seq: Number(r.seq),
            decided_at: r.occurred_at,
            actor: r.actor,
            decision: String(m['decision']),
            reason: String(m['reason'] ?? ''),
            revision: (m['revision'] as number | null) ?? null,
            policies: (m['policies'] as string[]) ?? [],
            kill_switch: (m['kill_switch'] as string | null) ?? null,
            hook_event_name: String(m['hook_event_name'] ?? ''),
            tool_name: String(m['tool_name'] ?? ''),
            session_id: String(m['session_id'] ?? ''),
            agent_id: String(m['agent_id'] ?? ''),
            tool_input: m['tool_input'] ?? null,
            tool_input_sha256: String(m['tool_input_sha256'] ?? ''),
          });
          if (items.length > limit) break;
        }
        more = page.has_more;
      }
      const has_more = items.length > limit || more;
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      return { items: page, has_more, ...(has_more ? { cursor: String(items.length > limit && last ? last.seq + 1 : from) } : {}) };
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: `${BASE}/kill-switches`,
    operationId: 'listKillSwitches',
    summary: 'Engaged kill switches ' + '(tenant-wide or per agent)',
    permission: 'governance:pep:read',
    response: KillSwitchList,
    handler: async (ctx) => ({ items: await listKillSwitches(ctx.services.store, tenantOf(ctx)) }),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/kill-switches`,
    operationId: 'engageKillSwitch',
    summary: 'Engage a kill switch: every decision for the ' + 'tenant (or the agent) is deny until released',
    permission: 'governance:killswitch:admin',
    audit: 'pep.killswitch.engage',
    body: KillSwitchBody,
    response: KillSwitch,
    status: 201,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const scope = await engageScope(ctx.services.store, tenant, ctx.body.agent);
      // Recorded with the switch's row; engaging a switch already engaged changes nothing and records nothing.
      const ks = await ctx.services.events.withEvents((emit) =>
        engageKillSwitch(ctx.services.store, tenant, scope, ctx.body.reason ?? '', ctx.principal?.actor ?? 'system', (tx, k) =>
          emit({ type: 'killswitch.engaged', tenant, subject: `kill_switch/${scope}`, data: { id: scope, reason: k.reason } }, tx),
        ),
      );
      await ctx.audit({ kind: 'kill_switch', id: scope }, { reason: ks.reason });
      return reply.json(ks, 201);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: `${BASE}/kill-switches/release`,
    operationId: 'releaseKillSwitch',
    summary: 'Release a kill switch (404 ' + 'when it is not engaged)',
    permission: 'governance:killswitch:admin',
    audit: 'pep.killswitch.release',
    body: KillSwitchReleaseBody,
    status: 204,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const scope = await releaseScope(ctx.services.store, tenant, ctx.body.agent);
      await ctx.services.events.withEvents((emit) =>
        releaseKillSwitch(ctx.services.store, tenant, scope, (tx) =>
          emit({ type: 'killswitch.released', tenant, subject: `kill_switch/${scope}`, data: { id: scope } }, tx),
        ),
      );
      await ctx.audit({ kind: 'kill_switch', id: scope });
      return reply.empty(204);
    },
  }),
];
