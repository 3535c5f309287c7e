/**
 * Managed agent settings as signed revisions over HTTPS against the real `svc serve`, on both
 * stores: validate (hook event typos and inline credentials are errors), publish (refuses inline
 * credentials, replaces the whole document, admin only), dry-run against the published revision,
 * the artifact verified by Debian's openssl with the published key and a flipped byte refused by
 * openssl and by check-in, distribution (published vs observed), wrong tenant, bad input.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir, type TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

const CP = '/v1/m/claude-policy';

export const SETTINGS = {
  permissions: { deny: ['Bash(curl:*)', 'Read(./.env)'], defaultMode: 'default' },
  env: { ANTHROPIC_API_KEY: '${ANTHROPIC_API_KEY}', CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8000' },
  hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: 'svc claude-hook --timeout 5s', timeout: 10 }] }] },
  apiKeyHelper: '/usr/local/bin/fetch-key',
};

for (const b of await serveBackends()) {
  let server: TestServer;
  let owner: string;
  let editor: string;
  let tenant: string;
  let otherTenant: string;

  let send: Send;

  async function ledger(action: string): Promise<Array<{ action: string; meta: string; target_id: string }>> {
    const res = await send(owner, 'GET', `/v1/audit?limit=1000`);
    assert.equal(res.status, 200, res.text);
    return (res.json().items as Array<{ action: string; meta: string; target_id: string }>).filter((r) => r.action === action);
  }

  describe(`${b.backend}: claude-policy over HTTPS`, { skip: b.skip }, () => {
    before(async () => {
      const d = await moduleDeployment(b, { editor: 'editor' });
      ({ server, tenant, otherTenant, send } = d);
      owner = d.tokens['owner']!;
      editor = d.tokens['editor']!;
    });
    after(async () => {
      await server?.stop();
    });

    it(
      'validate: a good document is valid (references and helpers are not credentials); a typo in a hook event and inline credentials ' +
        'are errors, by path, without the value',
      async () => {
        const good = (
          await send(editor, 'POST', `${CP}/validate`, { surface: 'managed-settings', content: JSON.stringify(SETTINGS) })
        ).json();
        assert.deepEqual([good.valid, good.errors], [true, []]);
        assert.match(good.sha256, /^[0-9a-f]{64}$/);
        const typo = (
          await send(editor, 'POST', `${CP}/validate`, {
            surface: 'hooks',
            content: JSON.stringify({ hooks: { PreToolUs: [{ hooks: [{ type: 'command', command: 'x' }] }] } }),
          })
        ).json();
        assert.equal(typo.valid, false);
        assert.match(typo.errors.join(' '), /PreToolUs/);
        const secretValue = 'sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA';
        const leaky = { ...SETTINGS, env: { ANTHROPIC_API_KEY: secretValue, GITHUB_TOKEN: 'plainvalue123' } };
        const res = await send(editor, 'POST', `${CP}/validate`, { surface: 'managed-settings', content: JSON.stringify(leaky) });
        assert.equal(res.status, 200);
        const v = res.json();
        assert.equal(v.valid, false);
        assert.deepEqual(v.credentials.map((c: { path: string }) => c.path).sort(), ['env.ANTHROPIC_API_KEY', 'env.GITHUB_TOKEN']);
        assert.ok(!res.text.includes(secretValue) && !res.text.includes('plainvalue123'), 'a finding never echoes the value');
        const mcp = (
          await send(editor, 'POST', `${CP}/validate`, {
            surface: 'managed-mcp',
            content: JSON.stringify({
              mcpServers: {
                gh: {
                  type: 'http',
                  url: 'https://mcp.example/gh',
                  headers: { Authorization: 'Bearer ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
                },
              },
            }),
          })
        ).json();
        assert.equal(mcp.valid, false);
        assert.deepEqual(
          mcp.credentials.map((c: { path: string }) => c.path),
          ['mcpServers.gh.headers.Authorization'],
        );
        const unknown = (
          await send(editor, 'POST', `${CP}/validate`, { surface: 'managed-settings', content: JSON.stringify({ futureSetting: true }) })
        ).json();
        assert.deepEqual([unknown.valid, unknown.warnings.length], [true, 1]);
        assert.equal(
          (await send(editor, 'POST', `${CP}/validate`, { surface: 'sandbox', content: '{"sandbox": {"enabled": "yes"}}' })).json().valid,
          false,
        );
        assert.equal((await send(editor, 'POST', `${CP}/validate`, { surface: 'sandbox', content: 'not json' })).json().valid, false);
      },
    );

    it(
      'publish: refuses inline credentials and invalid documents (nothing stored), needs the admin permission, stores signed revisions ' +
        'that replace the whole document; dry-run shows what changes; every publish in the ledger',
      async () => {
        const leaky = await send(owner, 'POST', `${CP}/publish`, {
          surface: 'managed-settings',
          content: JSON.stringify({ env: { OPENAI_API_KEY: 'literal-value-123' } }),
        });
        assert.equal(leaky.status, 400, leaky.text);
        assert.match(leaky.json().error.message, /inline credential.*env\.OPENAI_API_KEY/);
        assert.ok(!leaky.text.includes('literal-value-123'));
        assert.equal(
          (await send(owner, 'POST', `${CP}/publish`, { surface: 'managed-settings', content: '{"hooks": {"Nope": []}}' })).status,
          400,
        );
        assert.deepEqual((await send(owner, 'GET', `${CP}/versions?surface=managed-settings`)).json().items, []);
        assert.equal(
          (await send(editor, 'POST', `${CP}/publish`, { surface: 'managed-settings', content: JSON.stringify(SETTINGS) })).status,
          403,
        );

        const first = await send(owner, 'POST', `${CP}/publish`, {
          surface: 'managed-settings',
          content: JSON.stringify(SETTINGS),
          note: 'baseline',
        });
        assert.equal(first.status, 201, first.text);
        const r1 = first.json();
        assert.deepEqual([r1.revision, r1.active, r1.note], [1, true, 'baseline']);
        assert.equal(
          r1.content,
          `${JSON.stringify(SETTINGS, null, 2)}\n`,
          'the artifact is the document with two-space indentation and a final newline',
        );

        const second = { permissions: { deny: ['Bash(curl:*)'] } };
        const dry = (await send(editor, 'POST', `${CP}/dry-run`, { surface: 'managed-settings', content: JSON.stringify(second) })).json();
        assert.equal(dry.published_revision, 1);
        assert.equal(dry.unchanged, false);
        assert.deepEqual(dry.changes.map((c: { path: string; change: string }) => `${c.change} ${c.path}`).sort(), [
          'changed /permissions/deny',
          'removed /apiKeyHelper',
          'removed /env',
          'removed /hooks',
          'removed /permissions/defaultMode',
        ]);
        assert.deepEqual(
          (await send(owner, 'GET', `${CP}/versions?surface=managed-settings`)).json().items.length,
          1,
          'dry-run stores nothing',
        );
        const r2 = (await send(owner, 'POST', `${CP}/publish`, { surface: 'managed-settings', content: JSON.stringify(second) })).json();
        assert.equal(r2.revision, 2);
        assert.deepEqual(
          JSON.parse((await send(owner, 'GET', `${CP}/artifact?surface=managed-settings`)).json().content),
          second,
          'a publish replaces the whole document',
        );
        assert.equal(
          (await send(editor, 'POST', `${CP}/dry-run`, { surface: 'managed-settings', content: JSON.stringify(second) })).json().unchanged,
          true,
        );
        const versions = (await send(editor, 'GET', `${CP}/versions?surface=managed-settings`)).json().items as Array<{
          revision: number;
          active: boolean;
        }>;
        assert.deepEqual(
          versions.map((v) => [v.revision, v.active]),
          [
            [2, true],
            [1, false],
          ],
        );
        assert.equal((await send(editor, 'GET', `${CP}/versions/1?surface=managed-settings`)).json().note, 'baseline');
        const records = await ledger('claude_policy.publish');
        assert.deepEqual(records.map((r) => r.target_id).sort(), ['managed-settings/1', 'managed-settings/2']);
        // Surfaces are separate, and the governance Cedar surface "hooks" is another thing again.
        assert.deepEqual((await send(owner, 'GET', `${CP}/versions?surface=hooks`)).json().items, []);
        assert.equal((await send(owner, 'GET', '/v1/m/governance/pdp/versions?surface=claude:managed-settings')).status, 400);
        const ev = (await send(owner, 'GET', '/v1/m/eventing/events?type=claude_policy.published&limit=100')).json();
        assert.equal(ev.items.length, 2, JSON.stringify(ev));
      },
    );

    it(
      "the artifact verifies with Debian's openssl and the published key; a flipped byte fails openssl and check-in; distribution " +
        'shows published vs observed',
      async () => {
        execFileSync('openssl', ['version']);
        await send(owner, 'POST', `${CP}/publish`, {
          surface: 'managed-mcp',
          content: JSON.stringify({ mcpServers: { docs: { type: 'http', url: 'https://mcp.example/docs' } } }),
        });
        const old = (await send(editor, 'GET', `${CP}/artifact?surface=managed-mcp`)).json();
        await send(owner, 'POST', `${CP}/publish`, {
          surface: 'managed-mcp',
          content: JSON.stringify({ mcpServers: { docs: { type: 'http', url: 'https://mcp.example/docs2' } } }),
        });
        const a = (await send(editor, 'GET', `${CP}/artifact?surface=managed-mcp`)).json();
        assert.deepEqual([a.revision, a.file, a.alg], [2, 'managed-mcp.json', 'ed25519']);
        const key = (await send(editor, 'GET', `${CP}/signing-key`)).json();
        assert.equal(a.key_fingerprint, key.fingerprint);
        assert.equal(a.public_key_pem, key.public_key_pem);
        const dir = tempDir('svc-cp-');
        const f = (n: string) => path.join(dir, n);
        writeFileSync(f('key.pem'), a.public_key_pem);
        writeFileSync(f('managed-mcp.json'), a.content);
        writeFileSync(f('sig'), Buffer.from(a.signature, 'base64'));
        assert.equal(
          execFileSync('openssl', ['dgst', '-sha256', '-r', f('managed-mcp.json')])
            .toString()
            .split(' ')[0],
          a.sha256,
        );
        // The key's fingerprint is the SHA-256 of its SPKI DER, as openssl computes it too.
        const der = execFileSync('openssl', ['pkey', '-pubin', '-in', f('key.pem'), '-outform', 'DER']);
        assert.equal(execFileSync('openssl', ['dgst', '-sha256', '-r'], { input: der }).toString().split(' ')[0], a.key_fingerprint);
        const verify = () =>
          execFileSync(
            'openssl',
            ['pkeyutl', '-verify', '-pubin', '-inkey', f('key.pem'), '-rawin', '-in', f('managed-mcp.json'), '-sigfile', f('sig')],
            { stdio: 'pipe' },
          ).toString();
        assert.match(verify(), /Signature Verified Successfully/);

        const checkin = (host: string, bytes: Buffer, extra: Record<string, unknown> = {}) =>
          send(editor, 'POST', `${CP}/checkins`, { host, surface: 'managed-mcp', content_b64: bytes.toString('base64'), ...extra });
        const good = (await checkin('web-1', Buffer.from(a.content))).json();
        assert.deepEqual([good.verified, good.current, good.revision, good.published_revision], [true, true, 2, 2]);
        const withSig = (await checkin('web-1', Buffer.from(a.content), { signature: a.signature })).json();
        assert.equal(withSig.current, true);
        const wrongSig = (await checkin('web-1', Buffer.from(a.content), { signature: old.signature })).json();
        assert.equal(wrongSig.verified, false, 'a signature of other bytes does not verify');
        await checkin('web-1', Buffer.from(a.content));
        const stale = (await checkin('web-2', Buffer.from(old.content))).json();
        assert.deepEqual([stale.verified, stale.current, stale.revision], [true, false, 1]);

        const flipped = Buffer.from(a.content);
        flipped[10] = flipped[10]! ^ 0x01;
        writeFileSync(f('managed-mcp.json'), flipped);
        assert.throws(verify, 'openssl refuses the flipped byte');
        const bad = await checkin('web-3', flipped);
        assert.equal(bad.status, 200, bad.text);
        assert.deepEqual([bad.json().verified, bad.json().current, bad.json().revision], [false, false, null]);

        const d = (await send(editor, 'GET', `${CP}/distribution?surface=managed-mcp`)).json();
        assert.deepEqual(d.published, { revision: 2, sha256: a.sha256 });
        assert.deepEqual(
          d.hosts.map((h: { host: string; verified: boolean; current: boolean }) => [h.host, h.verified, h.current]),
          [
            ['web-1', true, true],
            ['web-2', true, false],
            ['web-3', false, false],
          ],
        );
        assert.deepEqual(d.summary, { hosts: 3, current: 1, stale: 1, unverified: 1 });
        assert.ok(
          (await ledger('claude_policy.checkin')).some((r) => r.target_id === 'managed-mcp/web-3' && JSON.parse(r.meta).verified === false),
        );
      },
    );

    it('another tenant sees none of it (404 for an artifact, empty lists); bad input is the error envelope', async () => {
      assert.equal((await send(owner, 'GET', `${CP}/artifact?surface=managed-settings`, undefined, otherTenant)).status, 404);
      assert.deepEqual((await send(owner, 'GET', `${CP}/versions?surface=managed-settings`, undefined, otherTenant)).json().items, []);
      assert.deepEqual((await send(owner, 'GET', `${CP}/distribution?surface=managed-mcp`, undefined, otherTenant)).json().hosts, []);
      assert.equal((await send(owner, 'GET', `${CP}/versions/1?surface=managed-settings`, undefined, otherTenant)).status, 404);
      const cases: Array<[string, string, string]> = [
        ['POST', `${CP}/publish`, '{"surface":'],
        ['POST', `${CP}/publish`, JSON.stringify({ surface: 'managed-settings', content: '{}', extra: 1 })],
        ['POST', `${CP}/publish`, JSON.stringify({ surface: 'settings', content: '{}' })],
        ['POST', `${CP}/validate`, JSON.stringify({ surface: 'hooks', content: '{}\u0000' })],
        ['POST', `${CP}/checkins`, JSON.stringify({ host: 'a b', surface: 'hooks', content_b64: '' })],
        ['POST', `${CP}/checkins`, JSON.stringify({ host: 'h', surface: 'hooks', content_b64: '***' })],
        ['GET', `${CP}/versions`, ''],
        ['GET', `${CP}/versions/0?surface=hooks`, ''],
      ];
      for (const [method, p, raw] of cases) {
        const res = await send(owner, method, p, undefined, tenant, raw || undefined);
        assert.equal(res.status, 400, `${method} ${p} ${raw}: ${res.status} ${res.text}`);
        assert.equal(res.json().error.code, 'bad_request');
      }
    });
  });
}
