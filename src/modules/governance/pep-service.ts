/**
 * The policy decision for an agent tool call (the hook's PreToolUse / PostToolUse JSON): kill
 * switches first (they force `deny`), then the active revision of the `hooks` surface, compiled and
 * cached (policy-store.ts, policy-engine.ts); no published policy is `deny`. Every decision is one
 * ledger record (`pep.decision`, the tool input summarised and redacted, redact.ts) and one
 * `pep.decided` event, written to the event log in that record's commit. Nothing else is written:
 * the decision costs no transaction of its own beyond the ledger's group commit, which batches
 * concurrent decisions into one (ledger/pipeline.ts).
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { RequestContext } from '../../http/context.js';
import { CEDAR_NAMESPACE } from '../../auth/pdp-cedar.js';
import { grantIn } from '../../auth/principal.js';
import { newId } from '../../store/ids.js';
import { errors } from '../../contract/errors.js';
import { tenantOf } from '../../http/request-scope.js';
import { killSwitches, switchFor } from './kill-switch.js';
import { activePolicy, HOOKS_SURFACE } from './policy-store.js';
import { toCedarValue, type CedarCall, type Evaluation, type Verdict } from './policy-engine.js';
import { summariseInput } from './redact.js';

/** The hook JSON the endpoint takes (Claude Code's hook input, plus the agent id the hook client adds). */
export interface HookInput {
  hook_event_name: string;
  session_id: string;
  tool_name: string;
  tool_input: Record<string, unknown>;
  agent_id?: string;
  cwd?: string;
  permission_mode?: string;
  transcript_path?: string;
  tool_response?: unknown;
}

export interface PepDecision {
  decision: Verdict;
  reason: string;
  /** the policy revision that decided; null when a kill switch or the absence of a policy decided */
  revision: number | null;
  decision_id: string;
  policies: string[];
  kill_switch: string | null;
}

const uid = (type: string, id: string): EntityUidJson => ({ type: `${CEDAR_NAMESPACE}::${type}`, id });

/** The Cedar request of a hook call: principal = the credential, action = the hook event, resource = the tool. */
export function hookCedarCall(ctx: Pick<RequestContext, 'principal'>, tenant: string, h: HookInput): CedarCall {
  const p = ctx.principal;
  if (!p) throw errors.unauthenticated();
  const tenantUid = uid('Tenant', tenant);
  const principal = p.kind === 'token' ? uid('ApiKey', p.credentialId) : uid('User', p.userId);
  const role = grantIn(p, tenant)?.role;
  const entities: EntityJson[] = [
    {
      uid: principal,
      attrs: { kind: p.kind, actor: p.actor, user_id: p.userId, superadmin: p.superadmin, aal: p.aal, ...(role ? { role } : {}) },
      parents: [tenantUid],
    },
    { uid: uid('Tool', h.tool_name), attrs: { name: h.tool_name }, parents: [] },
    { uid: tenantUid, attrs: {}, parents: [] },
  ];
  const context = {
    hook_event_name: h.hook_event_name,
    tool_name: h.tool_name,
    session_id: h.session_id,
    agent_id: h.agent_id ?? p.actor,
    tenant,
    tool_input: toCedarValue(h.tool_input) ?? {},
    ...(h.cwd !== undefined ? { cwd: h.cwd } : {}),
    ...(h.permission_mode !== undefined ? { permission_mode: h.permission_mode } : {}),
  };
  return { principal, action: uid('Action', h.hook_event_name), resource: uid('Tool', h.tool_name), context, entities };
}

/** Decides one hook call, records it in the ledger and the event log; resolves once both are durable. */
export async function decideHook(
  ctx: Pick<RequestContext, 'principal' | 'tenant' | 'services' | 'requestId' | 'audit'>,
  h: HookInput,
): Promise<PepDecision> {
  const tenant = tenantOf(ctx);
  const p = ctx.principal;
  if (!p) throw errors.unauthenticated();
  const agent = h.agent_id ?? p.actor;
  const switches = await killSwitches(ctx.services.store, tenant);
  const sw = switchFor(switches, h.agent_id, p.actor);
  let out: { decision: Verdict; reason: string; revision: number | null; policies: string[]; kill_switch: string | null };
  if (sw)
    out = {
      decision: 'deny',
      reason: `kill switch ${sw.scope} is ` + `engaged${sw.reason ? `: ${sw.reason}` : ''}`,
      revision: null,
      policies: [],
      kill_switch: sw.scope,
    };
  else {
    const pol = await activePolicy(ctx.services.store, tenant, HOOKS_SURFACE);
    if (!pol)
      out = {
        decision: 'deny',
        reason: `no policy is published for surface ` + `${HOOKS_SURFACE} (deny by default)`,
        revision: null,
        policies: [],
        kill_switch: null,
      };
    else {
      const ev: Evaluation = pol.compiled.evaluate(hookCedarCall(ctx, tenant, h));
      out = { decision: ev.decision, reason: ev.reason, revision: pol.revision, policies: ev.policies, kill_switch: null };
    }
  }
  const id = newId();
  // The decision's only row is its ledger record: `pep.decided` is written to the event log in that record's commit.
  const data = {
    id,
    decision: out.decision,
    revision: out.revision,
    tool_name: h.tool_name,
    hook_event_name: h.hook_event_name,
    session_id: h.session_id,
    agent_id: agent,
  };
  const events = ctx.services.events.stamp([{ type: 'pep.decided', tenant, subject: `pep_decision/${id}`, data }]);
  await ctx.audit(
    { kind: 'pep_decision', id },
    {
      decision: out.decision,
      reason: out.reason,
      revision: out.revision,
      policies: out.policies,
      kill_switch: out.kill_switch,
      hook_event_name: h.hook_event_name,
      tool_name: h.tool_name,
      session_id: h.session_id,
      agent_id: agent,
      tool_input: summariseInput(h.tool_input),
      tool_input_sha256: createHash('sha256')
        .update(canonicalize(h.tool_input) ?? '')
        .digest('hex'),
    },
    { action: 'pep.decision', events },
  );
  ctx.services.events.announce(events);
  return { ...out, decision_id: id };
}
