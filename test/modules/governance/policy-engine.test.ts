/**
 * The compiled policy set: its answers agree with the request path's PDP (src/auth/pdp-cedar.ts) on
 * the same inputs and policies; slicing by (action, resource) and the scope-only shortcut never
 * change an answer (checked against the whole set on many generated calls); `@decision("ask")`;
 * a policy that errors denies; a document that does not parse is refused; redaction.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createCedarPdp, cedarRequest } from '../../../src/auth/pdp-cedar.js';
import type { PdpInput } from '../../../src/auth/pdp.js';
import { compilePolicies, type CedarCall } from '../../../src/modules/governance/policy-engine.js';
import { summariseInput } from '../../../src/modules/governance/redact.js';

const log = pino({ level: 'silent' });

describe('governance policy engine', () => {
  it('agrees with the request path PDP on the same inputs and policies', async () => {
    const text = `permit(principal, action, resource);
forbid(principal, action == Svc::Action::"agent:write", resource) when { context.aal < 3 };
forbid(principal is Svc::ApiKey, action in Svc::Action::"read", resource == Svc::Resource::"audit");`;
    const pdp = createCedarPdp(text, log);
    const compiled = compilePolicies(text).compiled!;
    const inputs: PdpInput[] = [];
    for (const kind of ['user', 'token'] as const)
      for (const action of ['agent:write', 'agent:read', 'audit:read', 'token:write'])
        for (const aal of [1, 3])
          for (const res of ['agent', 'audit'])
            inputs.push({
              principal: { id: kind === 'user' ? 'user:u1' : 'token:t1', kind, userId: 'u1', superadmin: false, role: 'editor', aal },
              action,
              resource: { kind: res, tenant: '01900000-0000-7000-8000-000000000001' },
              context: { method: 'GET', route: '/x', remoteAddress: '127.0.0.1', requestId: 'r' },
            });
    for (const input of inputs) {
      const expected = await pdp.decide(input);
      const call = cedarRequest(input) as CedarCall;
      assert.equal(compiled.evaluate(call).decision, expected, JSON.stringify(input));
      assert.equal(compiled.evaluate(call, { sliced: false }).decision, expected);
    }
  });

  it('slices and the scope-only shortcut give the whole set’s answer (200 policies, generated calls)', () => {
    const lines: string[] = [];
    for (let t = 0; t < 20; t++) {
      lines.push(`@id("p${t}") permit(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"T${t}");`);
      for (let i = 0; i < 8; i++)
        lines.push(
          `@id("c${t}-${i}") ${i % 3 === 0 ? 'forbid' : 'permit'}(principal, action == Svc::Action::"PreToolUse", resource == ` +
            `Svc::Tool::"T${t}") when { context.tool_input has command && context.tool_input.command like "op${i}*" };`,
        );
    }
    for (let i = 0; i < 18; i++)
      lines.push(
        `@id("any${i}") ${i % 2 ? 'forbid' : 'permit'}(principal, action, resource) when { context.tool_input has command && ` +
          `context.tool_input.command == "x${i}" };`,
      );
    lines.push('@id("ask-all-post") @decision("ask") permit(principal, action == Svc::Action::"PostToolUse", resource);');
    lines.push('@id("scope-forbid") forbid(principal, action == Svc::Action::"PreToolUse", resource == Svc::Tool::"T3");');
    const r = compilePolicies(lines.join('\n'));
    assert.ok(r.ok, r.errors.join('; '));
    assert.equal(r.policies.length, 200);
    const set = r.compiled!;
    let n = 0;
    for (let t = 0; t < 24; t++)
      for (const ev of ['PreToolUse', 'PostToolUse'])
        for (const cmd of [undefined, 'op1 a', 'op3 b', 'x4', 'x5', 'zzz']) {
          const call: CedarCall = {
            principal: { type: 'Svc::ApiKey', id: 'k' },
            action: { type: 'Svc::Action', id: ev },
            resource: { type: 'Svc::Tool', id: `T${t}` },
            context: { tool_input: cmd === undefined ? {} : { command: cmd } },
            entities: [],
          };
          const whole = set.evaluate(call, { sliced: false });
          const sliced = set.evaluate(call);
          assert.equal(sliced.decision, whole.decision, `${ev} T${t} ${cmd}: ${sliced.reason} / ${whole.reason}`);
          assert.deepEqual([...sliced.policies].sort(), [...whole.policies].sort());
          assert.equal(set.evaluate(call).decision, whole.decision, 'memo');
          n++;
        }
    assert.equal(n, 288);
    const fixed = set.evaluate({
      principal: { type: 'Svc::ApiKey', id: 'k' },
      action: { type: 'Svc::Action', id: 'PostToolUse' },
      resource: { type: 'Svc::Tool', id: 'Nope' },
      context: { tool_input: {} },
      entities: [],
    });
    assert.equal(fixed.decision, 'ask');
  });

  it('a policy that fails to evaluate denies; a document that does not parse is refused with the reason', () => {
    const set = compilePolicies('permit(principal, action, resource) when { context.n > 1 };').compiled!;
    const ev = set.evaluate({
      principal: { type: 'Svc::ApiKey', id: 'k' },
      action: { type: 'Svc::Action', id: 'PreToolUse' },
      resource: { type: 'Svc::Tool', id: 'Bash' },
      context: { n: 'not a number' },
      entities: [],
    });
    assert.equal(ev.decision, 'deny');
    assert.ok(ev.errors.length > 0);
    const bad = compilePolicies('permit(principal, action, resource');
    assert.equal(bad.ok, false);
    assert.ok(bad.errors[0]);
    assert.equal(compilePolicies('@id("a") permit(principal, action, resource);\n@id("a") forbid(principal, action, resource);').ok, false);
  });

  it('redaction: secrets never survive into the summary; long values are cut', () => {
    const s = JSON.stringify(
      summariseInput({
        command:
          'curl -H "Authorization: Bearer abcdefghijklmnop123" https://u:p4ssw0rd@host/ && export password=hunter2 ' +
          'AWS=AKIAABCDEFGHIJKLMNOP',
        api_key: 'plain-secret',
        nested: { token: 'x', text: 'svck_ABCDEFGHIJKLMNOP and -----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----' },
        long: 'a'.repeat(1000),
      }),
    );
    for (const secret of [
      'abcdefghijklmnop123',
      'p4ssw0rd',
      'hunter2',
      'AKIAABCDEFGHIJKLMNOP',
      'plain-secret',
      'svck_ABCDEFGHIJKLMNOP',
      'MIIB',
    ])
      assert.ok(!s.includes(secret), `${secret} in ${s}`);
    assert.match(s, /…\(1000 chars\)/);
  });
});
