/**
 * The PEP bench's policy document and decision bodies, shared by the developer scenario
 * (bench/scenarios/pep.ts) and `svc bench pep` (src/cli/commands/bench/run.ts), which ships this
 * file in the package (dist/bench/lib/).
 */
export const PEP_PATH = '/v1/m/governance/pep/decisions';

/** Three policies: `Read` is scope-only (no Cedar call), `Bash` has conditions. */
export const SMALL_POLICIES = `@id("read") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Read");
@id("git") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"Bash") when { context.tool_input has command ` +
  `&& context.tool_input.command like "git *" };
@id("no-force") forbid(principal, action, resource == Svc::Tool::"Bash") when { context.tool_input has command && ` +
  `context.tool_input.command like "*--force*" };`;

/** The n-th decision body: even n a scope-only `Read`, odd n a Cedar-evaluated `Bash` whose command differs every time (no memo hit). */
export function pepDecisionBody(session: string, n: number): string {
  return n % 2 === 0
    ? JSON.stringify({
        hook_event_name: 'PreToolUse',
        session_id: session,
        tool_name: 'Read',
        tool_input: { file_path: `/src/file-${n}.ts` },
      })
    : JSON.stringify({ hook_event_name: 'PreToolUse', session_id: session, tool_name: 'Bash', tool_input: { command: `git status ${n}` } });
}
