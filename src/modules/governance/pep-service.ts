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
import type { CedarValueJson, EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import type { RequestContext } from '../../http/context.js';
import { CEDAR_NAMESPACE } from '../../auth/pdp-cedar.js';
import { grantIn } from '../../auth/principal.js';
import { newId } from '../../store/ids.js';
import { errors } from '../../contract/errors.js';
import { tenantOf } from '../../http/request-scope.js';
import { killSwitches, switchFor } from './kill-switch.js';
import { activePolicy, HOOKS_SURFACE } from './policy-store.js';
import { toCedarValue, type CedarCall, type CompiledPolicySet, type Evaluation, type Verdict } from './policy-engine.js';
import { parseShellCommands } from './shell-commands.js';
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
export function hookCedarCall(
  ctx: Pick<RequestContext, 'principal'>,
  tenant: string,
  h: HookInput,
  extra: Record<string, CedarValueJson> = {},
): CedarCall {
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
    ...extra,
  };
  return { principal, action: uid('Action', h.hook_event_name), resource: uid('Tool', h.tool_name), context, entities };
}

const denied = (reason: string): Evaluation => ({ decision: 'deny', reason, policies: [], errors: [], path: 'static' });
const clip = (s: string) => (s.length > 120 ? `${s.slice(0, 117)}...` : s);

/**
 * Decides a hook call against a compiled revision. A Bash call is decided per simple command
 * (shell-commands.ts): each is one Cedar request whose `context.tool_input.command` is that
 * command's text, with `context.command` (its name, arguments, redirections…) and `context.bash`
 * (the whole source, every command name); the call is allowed only when every command is, `ask`
 * when one asks and none denies, and the reason names the command that decided. A command whose
 * name is not known before it runs is denied unless a permit annotated `@unknown_commands("allow")`
 * allows it. What cannot be parsed is denied.
 */
export function evaluateHook(
  compiled: CompiledPolicySet,
  ctx: Pick<RequestContext, 'principal'>,
  tenant: string,
  h: HookInput,
  opts: { sliced?: boolean } = {},
): Evaluation {
  const source = h.tool_input['command'];
  // Without a command a Bash call runs nothing: it is decided as one call, without `context.command`.
  if (h.tool_name !== 'Bash' || source === undefined) return compiled.evaluate(hookCedarCall(ctx, tenant, h), opts);
  if (typeof source !== 'string') return denied('a Bash call whose command is not a string is denied');
  const parsed = parseShellCommands(source);
  if (!parsed.ok) return denied(`the Bash command cannot be parsed, so it is denied: ${parsed.error}`);
  const parts = parsed.commands;
  if (parts.length === 0) return denied('the Bash command runs no command (denied)');
  const names = [...new Set(parts.map((c) => c.name))];
  const policies = new Set<string>();
  let ask: Evaluation | null = null;
  let last: Evaluation | null = null;
  for (const [i, part] of parts.entries()) {
    // The reason is recorded and shown: redacted like the recorded input (a credential in an argument stays out).
    const text = JSON.stringify(clip(String(summariseInput(part.text)))) + (part.known ? '' : ' (its name is not known before it runs)');
    const label = parts.length === 1 ? `command ${text}` : `command ${i + 1} of ${parts.length} ${text}`;
    const bash = { source, names, count: parts.length, index: i };
    const input = { ...h, tool_input: { ...h.tool_input, command: part.text } };
    let ev = compiled.evaluate(hookCedarCall(ctx, tenant, input, { command: toCedarValue(part) ?? {}, bash }), opts);
    if (ev.decision !== 'deny' && !part.known && !ev.policies.some((id) => compiled.allowsUnknownCommands(id)))
      ev = denied('no permit annotated @unknown_commands("allow") allows it');
    if (ev.decision === 'deny') return { ...ev, reason: `${label}: ${ev.reason}` };
    if (ev.decision === 'ask' && !ask) ask = { ...ev, reason: `${label}: ${ev.reason}` };
    for (const p of ev.policies) policies.add(p);
    last = ev;
  }
  const decided = ask ?? (parts.length === 1 && last ? last : null);
  if (decided) return { ...decided, policies: [...policies] };
  return {
    decision: 'allow',
    reason: `all ${parts.length} commands permitted by policy ${[...policies].join(', ')}`,
    policies: [...policies],
    errors: [],
    path: last?.path ?? 'engine',
  };
}

/** The event Claude Code sends after a tool call ran: there is nothing left to allow or deny. */
const AFTER_THE_CALL = 'PostToolUse';

/**
 * A PostToolUse is recorded as what it is, a call that ran (`allow`), unless a policy explicitly
 * flags it: a forbid that matches (or a policy that fails to evaluate) records `deny`, which the
 * hook hands the model as a notice. Policies written for PreToolUse only, the documented examples
 * included, therefore record every call that ran as `allow` instead of a default deny.
 */
function afterTheCall(
  ev: Evaluation | undefined,
  pol: { revision: number } | undefined,
): { decision: Verdict; reason: string; revision: number | null; policies: string[]; kill_switch: null } {
  const revision = pol ? pol.revision : null;
  // A default deny (no permit matched, an unknown or unparsed command) names no policy; a forbid names
  // the policies that matched, and a policy that failed to evaluate leaves its errors.
  if (ev && ev.decision === 'deny' && (ev.policies.length > 0 || ev.errors.length > 0))
    return { decision: 'deny', reason: ev.reason, revision, policies: ev.policies, kill_switch: null };
  const why = ev && ev.decision !== 'deny' ? `; ${ev.reason}` : '; no policy flags it';
  const policies = ev && ev.decision !== 'deny' ? ev.policies : [];
  return { decision: 'allow', reason: `the call ran${why}`, revision, policies, kill_switch: null };
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
    if (h.hook_event_name === AFTER_THE_CALL)
      out = afterTheCall(pol ? evaluateHook(pol.compiled, ctx, tenant, h) : undefined, pol ?? undefined);
    else if (!pol)
      out = {
        decision: 'deny',
        reason: `no policy is published for surface ` + `${HOOKS_SURFACE} (deny by default)`,
        revision: null,
        policies: [],
        kill_switch: null,
      };
    else {
      const ev: Evaluation = evaluateHook(pol.compiled, ctx, tenant, h);
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
