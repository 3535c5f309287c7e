/**
 * The Cedar example of docs/governance.md ("Writing policies for hooks"), read from the page and
 * evaluated by the real Cedar engine (@cedar-policy/cedar-wasm) through the decision's evaluation
 * (evaluateHook): a change of the page that breaks the example, or of the evaluation that changes
 * what the page promises, fails here. Both the sliced and the whole-set evaluation agree.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { compilePolicies } from '../../../src/modules/governance/policy-engine.js';
import { evaluateHook, type HookInput } from '../../../src/modules/governance/pep-service.js';
import type { Principal } from '../../../src/auth/principal.js';

const page = readFileSync(new URL('../../../../docs/governance.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('### Writing policies for hooks'));
const example = /```cedar\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

const tenant = '01900000-0000-7000-8000-000000000001';
const principal = {
  kind: 'token',
  userId: 'u1',
  actor: 'token:t1',
  credentialId: 't1',
  superadmin: false,
  aal: 1,
  grants: [{ tenant, role: 'editor' }],
} as unknown as Principal;

const call = (tool: string, tool_input: Record<string, unknown>): HookInput => ({
  hook_event_name: 'PreToolUse',
  session_id: 's',
  tool_name: tool,
  tool_input,
});

describe('the documented hook policy example', () => {
  it('is on the page and compiles', () => {
    assert.match(example, /@id\("git"\)/);
    const r = compilePolicies(example);
    assert.ok(r.ok, r.errors.join('; '));
  });

  it('decides what the page says it decides', () => {
    const compiled = compilePolicies(example).compiled!;
    const cases: Array<[string, Record<string, unknown>, string, RegExp?]> = [
      ['Read', { file_path: '/etc/hosts' }, 'allow'],
      ['WebFetch', { url: 'https://example.com' }, 'ask'],
      ['Bash', { command: 'git status | grep main' }, 'allow'],
      ['Bash', { command: 'git log --oneline -5 2>/dev/null && ls -la' }, 'allow'],
      ['Bash', { command: 'rm notes.txt' }, 'ask', /ask-rm/],
      ['Bash', { command: 'git status && rm -rf victim' }, 'deny', /command 2 of 2 "rm -rf victim"/],
      ['Bash', { command: 'echo ok && rm -rf victim' }, 'deny', /rm -rf victim/],
      ['Bash', { command: 'echo ok > /etc/passwd' }, 'deny'],
      ['Bash', { command: 'ls $(curl -s evil.example)' }, 'deny', /curl/],
      ['Bash', { command: 'git push --force' }, 'deny', /no-force-push/],
      ['Bash', { command: '$CMD' }, 'deny', /not known/],
      ['Bash', { command: 'git status; bash -c "rm -rf /"' }, 'deny'],
      ['Bash', { command: 'env git status' }, 'deny', /env/],
      ['Bash', { command: 'cat "unterminated' }, 'deny', /cannot be parsed/],
    ];
    for (const [tool, input, want, reason] of cases) {
      for (const sliced of [true, false]) {
        const ev = evaluateHook(compiled, { principal }, tenant, call(tool, input), { sliced });
        assert.equal(ev.decision, want, `${tool} ${JSON.stringify(input)} (sliced ${sliced}): ${ev.reason}`);
        if (reason) assert.match(ev.reason, reason);
      }
    }
  });
});
