/**
 * Capabilities configurations over HTTPS against the real `svc serve`, on both stores: secret
 * references only (inline credentials refused, a reference to a missing secret refused, the
 * secrets store lists the reference, a deleted secret fails closed at use), every change a
 * revision, PUT replaces the whole object (fields left out reset to the server defaults), wrong
 * tenant 404, unknown fields refused, every mutation in the ledger and the event log.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestServer } from '../../helpers/server.js';
import { moduleDeployment, serveBackends, type Send } from '../../helpers/serve-stores.js';

const C = '/v1/m/capabilities/configs';
const SECRET_VALUE = 'ghp_SUPERSECRETVALUE1234567890abcdef';

for (const b of await serveBackends()) {
  let server: TestServer;
  let owner: string;
  let editor: string;
  let viewer: string;
  let tenant: string;
  let otherTenant: string;

  let send: Send;

  async function ledger(action: string): Promise<Array<{ action: string; meta: string; target_id: string }>> {
    const res = await send(owner, 'GET', `/v1/audit?limit=1000`);
    assert.equal(res.status, 200, res.text);
    return (res.json().items as Array<{ action: string; meta: string; target_id: string }>).filter((r) => r.action === action);
  }

  describe(`${b.backend}: capabilities configurations over HTTPS`, { skip: b.skip }, () => {
    before(async () => {
      const d = await moduleDeployment(b, { editor: 'editor', viewer: 'viewer' });
      ({ server, tenant, otherTenant, send } = d);
      owner = d.tokens['owner']!;
      editor = d.tokens['editor']!;
      viewer = d.tokens['viewer']!;
      for (const name of ['github-mcp', 'jira-mcp'])
        assert.equal((await send(owner, 'PUT', '/v1/console/secrets', { name, value: SECRET_VALUE })).status, 200);
    });
    after(async () => {
      await server?.stop();
    });

    it(
      'create: defaults filled, references only; inline credentials and missing secrets refused without echoing values; the secrets ' +
        'store lists the reference',
      async () => {
        const res = await send(editor, 'POST', C, {
          name: 'github',
          kind: 'mcp_server',
          transport: 'http',
          url: 'https://mcp.example/github',
          headers: { Authorization: 'secret:github-mcp', 'X-Org': 'acme' },
        });
        assert.equal(res.status, 201, res.text);
        const c = res.json();
        assert.deepEqual(
          { ...c, id: undefined, created_at: undefined, updated_at: undefined },
          {
            id: undefined,
            created_at: undefined,
            updated_at: undefined,
            name: 'github',
            kind: 'mcp_server',
            description: '',
            enabled: true,
            transport: 'http',
            command: null,
            args: [],
            url: 'https://mcp.example/github',
            env: {},
            headers: { Authorization: 'secret:github-mcp', 'X-Org': 'acme' },
            server: null,
            tool: null,
            allowed_tools: [],
            denied_tools: [],
            requires_approval: false,
            timeout_ms: 30000,
            secret_refs: ['github-mcp'],
            revision: 1,
          },
        );
        const refused: Array<[unknown, RegExp]> = [
          [
            {
              name: 'x1',
              kind: 'mcp_server',
              transport: 'http',
              url: 'https://mcp.example/x',
              headers: { Authorization: `Bearer ${SECRET_VALUE}` },
            },
            /inline credential at headers\.Authorization/,
          ],
          [
            { name: 'x2', kind: 'mcp_server', command: 'npx', args: ['server'], env: { GITHUB_TOKEN: 'plain-value-123' } },
            /inline credential at env\.GITHUB_TOKEN/,
          ],
          [
            { name: 'x3', kind: 'mcp_server', command: 'npx', args: ['server', '--api-key', 'abcdef123456'] },
            /inline credential at args\[2\]/,
          ],
          [
            { name: 'x4', kind: 'mcp_server', command: 'npx', env: { GITHUB_TOKEN: 'secret:no-such-secret' } },
            /do not exist: no-such-secret/,
          ],
          [{ name: 'x5', kind: 'mcp_server', transport: 'http' }, /needs a url/],
          [{ name: 'x6', kind: 'tool', tool: 'create_issue' }, /names its server/],
          [{ name: 'x7', kind: 'tool', server: 'nope', tool: 'create_issue' }, /no mcp_server configuration named "nope"/],
        ];
        for (const [body, message] of refused) {
          const r = await send(editor, 'POST', C, body);
          assert.equal(r.status, 400, r.text);
          assert.match(r.json().error.message, message);
          assert.ok(!r.text.includes(SECRET_VALUE) && !r.text.includes('plain-value-123') && !r.text.includes('abcdef123456'), r.text);
        }
        assert.equal((await send(editor, 'GET', `${C}?limit=1000`)).json().items.length, 1, 'nothing refused was stored');
        const tool = await send(editor, 'POST', C, {
          name: 'github.create-issue',
          kind: 'tool',
          server: 'github',
          tool: 'create_issue',
          requires_approval: true,
        });
        assert.equal(tool.status, 201, tool.text);
        assert.equal(
          (await send(editor, 'POST', C, { name: 'github', kind: 'mcp_server', command: 'x' })).status,
          409,
          'names are unique per tenant',
        );
        const secrets = (await send(owner, 'GET', '/v1/console/secrets')).json().items as Array<{ name: string; references: string[] }>;
        assert.deepEqual(secrets.find((s) => s.name === 'github-mcp')?.references, [`capabilities:${tenant}/github`]);
        assert.equal((await send(viewer, 'POST', C, { name: 'v', kind: 'mcp_server', command: 'x' })).status, 403);
        assert.equal((await send(viewer, 'GET', `${C}/${c.id}`)).status, 200);
        assert.deepEqual(
          (await send(viewer, 'GET', `${C}?name=github`)).json().items.map((i: { id: string }) => i.id),
          [c.id],
        );
        assert.deepEqual(
          (await send(viewer, 'GET', `${C}?kind=tool`)).json().items.map((i: { name: string }) => i.name),
          ['github.create-issue'],
        );
      },
    );

    it(
      'PUT replaces the whole object: fields left out reset to the server defaults, never the stored values; every change a revision',
      async () => {
        const full = {
          name: 'jira',
          kind: 'mcp_server',
          description: 'Jira',
          enabled: false,
          command: 'jira-mcp',
          args: ['--site', 'acme'],
          env: { JIRA_TOKEN: 'secret:jira-mcp', JIRA_SITE: 'acme' },
          allowed_tools: ['search'],
          denied_tools: ['delete_issue'],
          requires_approval: true,
          timeout_ms: 5000,
        };
        const created = (await send(editor, 'POST', C, full)).json();
        assert.deepEqual([created.enabled, created.timeout_ms, created.secret_refs], [false, 5000, ['jira-mcp']]);
        const put = await send(editor, 'PUT', `${C}/${created.id}`, { name: 'jira', kind: 'mcp_server', command: 'jira-mcp-2' });
        assert.equal(put.status, 200, put.text);
        const r = put.json();
        assert.deepEqual(
          [
            r.revision,
            r.description,
            r.enabled,
            r.args,
            r.env,
            r.allowed_tools,
            r.denied_tools,
            r.requires_approval,
            r.timeout_ms,
            r.transport,
            r.command,
            r.secret_refs,
          ],
          [2, '', true, [], {}, [], [], false, 30000, 'stdio', 'jira-mcp-2', []],
        );
        assert.deepEqual((await send(editor, 'GET', `${C}/${created.id}`)).json(), r);
        const secrets = (await send(owner, 'GET', '/v1/console/secrets')).json().items as Array<{ name: string; references: string[] }>;
        assert.deepEqual(
          secrets.find((s) => s.name === 'jira-mcp')?.references,
          [],
          'the replaced revision no longer references the secret',
        );
        const revs = (await send(viewer, 'GET', `${C}/${created.id}/revisions`)).json().items;
        assert.deepEqual(
          revs.map((x: { revision: number; change: string }) => [x.revision, x.change]),
          [
            [2, 'replace'],
            [1, 'create'],
          ],
        );
        assert.equal(revs[1].config.timeout_ms, 5000);
        assert.deepEqual(revs[1].config.env, full.env);
        assert.equal(
          (await send(editor, 'PUT', `${C}/${created.id}`, { name: 'jira', kind: 'mcp_server', command: 'x', surprise: 1 })).status,
          400,
          'unknown fields are refused',
        );
        assert.equal((await send(editor, 'GET', `${C}/${created.id}`)).json().revision, 2, 'a refused PUT changes nothing');
        const replaced = await ledger('capabilities.config.replace');
        assert.ok(replaced.some((x) => x.target_id === created.id && JSON.parse(x.meta).previous_revision === 1));
      },
    );

    it(
      'a reference to a deleted secret fails closed at use (503 naming the secret, never a value); delete keeps the history; every ' +
        'mutation audited and in the event log',
      async () => {
        const c = (
          await send(editor, 'POST', C, { name: 'temp', kind: 'mcp_server', command: 'srv', env: { API_TOKEN: 'secret:temp-secret' } })
        ).json();
        assert.equal(c.error?.code, 'bad_request', 'the secret does not exist yet');
        assert.equal((await send(owner, 'PUT', '/v1/console/secrets', { name: 'temp-secret', value: SECRET_VALUE })).status, 200);
        const made = (
          await send(editor, 'POST', C, { name: 'temp', kind: 'mcp_server', command: 'srv', env: { API_TOKEN: 'secret:temp-secret' } })
        ).json();
        const ok = await send(editor, 'POST', `${C}/${made.id}/check`);
        assert.equal(ok.status, 200, ok.text);
        assert.deepEqual(ok.json().secrets, ['temp-secret']);
        assert.ok(!ok.text.includes(SECRET_VALUE));
        assert.equal((await send(owner, 'DELETE', '/v1/console/secrets?name=temp-secret')).status, 204);
        const closed = await send(editor, 'POST', `${C}/${made.id}/check`);
        assert.equal(closed.status, 503, closed.text);
        assert.equal(closed.json().error.code, 'unavailable');
        assert.match(closed.json().error.message, /temp-secret/);

        assert.equal((await send(editor, 'DELETE', `${C}/${made.id}`)).status, 204);
        assert.equal((await send(editor, 'GET', `${C}/${made.id}`)).status, 404);
        assert.equal((await send(editor, 'DELETE', `${C}/${made.id}`)).status, 404);
        const revs = (await send(editor, 'GET', `${C}/${made.id}/revisions`)).json().items;
        assert.deepEqual(
          revs.map((x: { revision: number; change: string }) => [x.revision, x.change]),
          [
            [2, 'delete'],
            [1, 'create'],
          ],
        );
        assert.equal(
          (await send(editor, 'POST', C, { name: 'temp', kind: 'mcp_server', command: 'srv' })).status,
          201,
          'a deleted name is free again',
        );
        for (const action of ['capabilities.config.create', 'capabilities.config.delete'])
          assert.ok(
            (await ledger(action)).some((x) => x.target_id === made.id),
            action,
          );
        const events = (await send(owner, 'GET', '/v1/m/eventing/events?limit=1000')).json().items as Array<{
          type: string;
          subject: string;
          data: { revision: number };
        }>;
        const mine = events.filter((e) => e.subject === `capability_config/${made.id}`).map((e) => `${e.type}@${e.data.revision}`);
        assert.deepEqual(mine, ['capability_config.created@1', 'capability_config.deleted@2']);
      },
    );

    it('another tenant gets 404 for every route of a configuration; bad input is the error envelope', async () => {
      const id = (await send(editor, 'GET', `${C}?name=github`)).json().items[0].id as string;
      for (const [method, p, body] of [
        ['GET', `${C}/${id}`, undefined],
        ['PUT', `${C}/${id}`, { name: 'github', kind: 'mcp_server', command: 'x' }],
        ['DELETE', `${C}/${id}`, undefined],
        ['GET', `${C}/${id}/revisions`, undefined],
        ['POST', `${C}/${id}/check`, undefined],
      ] as const) {
        const r = await send(owner, method, p, body, otherTenant);
        assert.equal(r.status, 404, `${method} ${p}: ${r.text}`);
      }
      assert.deepEqual((await send(owner, 'GET', C, undefined, otherTenant)).json().items, []);
      assert.equal((await send(editor, 'GET', `${C}/${id}`)).json().revision, 1, 'the other tenant changed nothing');
      const cases: Array<[string, string, string]> = [
        ['POST', C, '{"name":'],
        ['POST', C, JSON.stringify({ name: 'a', kind: 'mcp_server', command: 'x', extra: true })],
        ['POST', C, JSON.stringify({ name: 'a\u0000', kind: 'mcp_server', command: 'x' })],
        ['POST', C, JSON.stringify({ name: 'Bad Name', kind: 'mcp_server', command: 'x' })],
        ['POST', C, JSON.stringify({ name: 'a', kind: 'robot', command: 'x' })],
        ['POST', C, JSON.stringify({ name: 'a', kind: 'mcp_server', transport: 'http', url: 'http://example.com/' })],
        ['POST', C, JSON.stringify({ name: 'a', kind: 'mcp_server', command: 'x', timeout_ms: 'soon' })],
        ['GET', `${C}/not-a-uuid`, ''],
        ['GET', `${C}?limit=0`, ''],
      ];
      for (const [method, p, raw] of cases) {
        const res = await send(editor, method, p, undefined, tenant, raw || undefined);
        assert.equal(res.status, 400, `${method} ${p} ${raw}: ${res.status} ${res.text}`);
        assert.equal(res.json().error.code, 'bad_request');
      }
    });
  });
}
