/**
 * Module events reach the durable event log, so webhooks deliver them: a real `svc serve` on each
 * store, one subscription to every durable type of the catalog (creation refuses the in-process
 * ones with 400), the REST calls that cause holds, workspaces, approvals, findings, kill switches,
 * policies and PEP decisions, and the signed deliveries a loopback receiver gets. A refused change
 * (423 in a suspended tenant, 403, 404, 409) leaves no event in the log and is never delivered.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { call, setupAndLogin, startServer, type TestServer } from '../helpers/server.js';
import { testStores } from '../helpers/stores.js';
import { createTempDatabase, pgQuery, pgTestDsn } from '../helpers/pg.js';
import { startReceiver, verify, waitFor } from '../modules/eventing/harness.js';

const ADMIN = { email: 'owner@example.test', password: 'owner password 123' };
const G = '/v1/m/governance';

type CatalogItem = { type: string; durable: boolean };
type LoggedEvent = { type: string; subject: string; data: Record<string, unknown>; sequence: string };

for (const b of await testStores()) {
  describe(`${b.backend}: module events are durable and delivered`, { skip: b.skip }, () => {
    let server: TestServer;
    let dropDb: (() => Promise<void>) | undefined;
    let dsn: string | undefined;
    let owner: string;
    let tenant: string;
    let rx: Awaited<ReturnType<typeof startReceiver>>;
    let catalog: CatalogItem[];
    let sub: { id: string; secret: string };

    const send = async (token: string, method: string, p: string, body?: unknown) =>
      call(server, method, p, {
        headers: {
          authorization: `Bearer ${token}`, 'x-service-tenant': tenant,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    const ok = async (token: string, method: string, p: string, body: unknown, status: number) => {
      const r = await send(token, method, p, body);
      assert.equal(r.status, status, `${method} ${p}: ${r.text}`);
      return r.text === '' ? undefined : r.json();
    };
    /** The tenant's whole event log, as `GET /v1/m/eventing/events` pages it. */
    const logged = async (): Promise<LoggedEvent[]> => {
      const out: LoggedEvent[] = [];
      let after = 0;
      for (;;) {
        const res = await send(owner, 'GET', `/v1/m/eventing/events?after=${after}&limit=500`);
        const page = res.json() as { items: LoggedEvent[]; has_more: boolean; next_after: number };
        out.push(...page.items);
        if (!page.has_more) return out;
        after = page.next_after;
      }
    };
    const delivered = () => rx.delivered('/all').map((d) => verify(sub.secret, d) as unknown as LoggedEvent);
    const setTenantStatus = async (status: 'active' | 'suspended') => {
      if (dsn !== undefined) return void (await pgQuery(dsn, 'update tenants set status = $1 where id = $2', [status, tenant]));
      const db = new Database(path.join(server.dataDir, 'svc.db'));
      try {
        db.pragma('busy_timeout = 10000');
        db.prepare('update tenants set status = ? where id = ?').run(status, tenant);
      } finally {
        db.close();
      }
    };

    before(async () => {
      let args: string[] = [];
      if (b.backend === 'postgres') {
        const db = await createTempDatabase((await pgTestDsn()).dsn as string);
        dropDb = db.drop;
        dsn = db.dsn;
        args = ['--store', 'postgres', '--dsn', db.dsn];
      }
      const env = { SERVICE_RATE_LIMIT_RPS: '0', SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' };
      server = await startServer({ args, env, timeoutMs: 120_000 });
      ({ token: owner, tenant } = await setupAndLogin(server, ADMIN));
      rx = await startReceiver();
      catalog = (await ok(owner, 'GET', '/v1/m/eventing/event-types', undefined, 200)).items as CatalogItem[];
    });
    after(async () => {
      await rx?.close();
      await server?.stop();
      await dropDb?.();
    });

    it('a subscription accepts every durable type of the catalog, alone and all together; an in-process type is a 400', async () => {
      const durable = catalog.filter((c) => c.durable).map((c) => c.type);
      const named = ['hold.placed', 'workspace.created', 'approval.requested', 'finding.reported', 'killswitch.engaged', 'pep.decided'];
      for (const t of named) assert.ok(durable.includes(t), t);
      for (const t of durable) {
        const body = { name: `one-${t}`, event_types: [t], endpoint: rx.url('/one'), sink_format: 'json', enabled: false };
        const r = await send(owner, 'POST', '/v1/m/eventing/subscriptions', body);
        assert.equal(r.status, 201, `${t}: ${r.text}`);
        assert.equal((await send(owner, 'DELETE', `/v1/m/eventing/subscriptions/${r.json().id}`)).status, 204);
      }
      const inProcess = catalog.filter((c) => !c.durable).map((c) => c.type);
      assert.ok(inProcess.includes('subscription.tested'));
      for (const t of inProcess) {
        const body = { name: `no-${t}`, event_types: ['agent.created', t], endpoint: rx.url('/no'), sink_format: 'json' };
        const r = await send(owner, 'POST', '/v1/m/eventing/subscriptions', body);
        assert.equal(r.status, 400, `${t}: ${r.text}`);
        assert.equal(r.json().error.code, 'bad_request');
        assert.match(r.json().error.message, new RegExp(`${t.replace('.', '\\.')} are not written to the event log`));
      }
      const listed = (await send(owner, 'GET', '/v1/m/eventing/subscriptions')).json().items as Array<{ name: string }>;
      assert.ok(!listed.some((s) => s.name.startsWith('no-')), 'a refused subscription stores nothing');
      const all = { name: 'all', event_types: durable, endpoint: rx.url('/all'), sink_format: 'json' };
      sub = await ok(owner, 'POST', '/v1/m/eventing/subscriptions', all, 201);
    });

    it('REST changes of holds, workspaces, approvals, findings, kill switches, policies, PEP decisions are delivered', async () => {
      // Holds and kill switches name an agent that exists (references are resolved to ids when written).
      await ok(owner, 'POST', '/v1/agents', { name: 'agent-1' }, 201);
      const agent7 = await ok(owner, 'POST', '/v1/agents', { name: 'agent-7' }, 201);
      const holdBody = { subject_kind: 'agent', subject_ref: 'agent-1', matter: 'Acme v. Example', reason: 'litigation' };
      const hold = await ok(owner, 'POST', '/v1/m/compliance/holds', holdBody, 201);
      const ws = await ok(owner, 'POST', '/v1/workspaces', { root_path: '/srv/durable' }, 201);
      await ok(owner, 'PATCH', `/v1/workspaces/${ws.id}`, { version: 1, display_name: 'durable 2' }, 200);
      const plan = { action: 'compliance.hold.release', subject: `legal_hold/${hold.id}`, params: { reason: 'case closed' } };
      const approval = await ok(owner, 'POST', `${G}/approvals`, plan, 201);
      await ok(owner, 'POST', `${G}/approvals/${approval.id}/cancel`, { reason: 'not yet' }, 200);
      const report = { rule_id: 'dep.vuln', severity: 'high', subject_kind: 'package', subject_ref: 'pkg-durable', message: 'CVE-0000-1' };
      const findings = await ok(owner, 'POST', '/v1/m/security/findings', { findings: [report] }, 200);
      const findingId = findings.ids[0] as string;
      await ok(owner, 'PATCH', `/v1/m/security/findings/${findingId}`, { status: 'acknowledged', note: 'tracked' }, 200);
      await ok(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'agent-7', reason: 'incident 12' }, 201);
      await ok(owner, 'POST', `${G}/pep/kill-switches`, { agent: 'agent-7', reason: 'again' }, 201);
      const call7 = {
        hook_event_name: 'PreToolUse', session_id: 's-1', tool_name: 'Bash',
        tool_input: { command: 'ls' }, agent_id: 'agent-7',
      };
      const decision = await ok(owner, 'POST', `${G}/pep/decisions`, call7, 200);
      assert.equal(decision.decision, 'deny');
      await ok(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: 'agent-7' }, 204);
      const doc = 'permit (principal, action, resource);';
      await ok(owner, 'POST', `${G}/pdp/publish`, { content: doc }, 201);
      await ok(owner, 'POST', `${G}/pdp/publish`, { content: `${doc}\n` }, 201);
      await ok(owner, 'POST', `${G}/pdp/rollback`, { revision: 1 }, 200);

      const want: Array<[string, string]> = [
        ['hold.placed', `legal_hold/${hold.id}`],
        ['workspace.created', `workspace/${ws.id}`],
        ['workspace.updated', `workspace/${ws.id}`],
        ['approval.requested', `approval/${approval.id}`],
        ['approval.resolved', `approval/${approval.id}`],
        ['finding.reported', `finding/${findingId}`],
        ['finding.updated', `finding/${findingId}`],
        ['killswitch.engaged', `kill_switch/agent:${agent7.id}`],
        ['pep.decided', `pep_decision/${decision.decision_id}`],
        ['killswitch.released', `kill_switch/agent:${agent7.id}`],
        ['policy.published', 'policy_revision/hooks/1'],
        ['policy.published', 'policy_revision/hooks/2'],
        ['policy.rolled_back', 'policy_revision/hooks/1'],
      ];
      const mine = (list: LoggedEvent[]) => list.filter((e) => want.some(([t]) => t === e.type)).map((e) => [e.type, e.subject]);
      // The log holds each change once, in the order the changes committed (engaging an engaged switch changes nothing).
      assert.deepEqual(mine(await logged()), want);
      await waitFor(() => mine(delivered()).length >= want.length, 30_000, 'the deliveries');
      assert.deepEqual(mine(delivered()), want, 'delivered once each, in sequence order');
      const byType = new Map(delivered().map((e) => [e.type, e]));
      assert.equal(byType.get('hold.placed')?.data['matter'], 'Acme v. Example');
      assert.equal(byType.get('approval.resolved')?.data['status'], 'cancelled');
      assert.equal(byType.get('finding.updated')?.data['previous_status'], 'open');
      assert.equal(byType.get('pep.decided')?.data['decision'], 'deny');
      assert.match(String(byType.get('pep.decided')?.sequence), /^[1-9][0-9]*$/);
    });

    it('a refused change has no event in the log and is never delivered', async () => {
      const before = (await logged()).length;
      const ws = await ok(owner, 'POST', '/v1/workspaces', { root_path: '/srv/refusals' }, 201);
      // Stale version: the update ran and matched nothing, its transaction rolled back.
      assert.equal((await send(owner, 'PATCH', `/v1/workspaces/${ws.id}`, { version: 7, display_name: 'stale' })).status, 409);
      // The requester's own decision: the approval row was locked (updated) before the refusal, then rolled back.
      const approval = await ok(owner, 'POST', `${G}/approvals`, { action: 'x.y', subject: 'thing/1' }, 201);
      const own = await send(owner, 'POST', `${G}/approvals/${approval.id}/decisions`, { decision: 'approve', reason: 'mine' });
      assert.equal(own.status, 403);
      assert.equal((await send(owner, 'POST', `${G}/pep/kill-switches/release`, { agent: 'never-engaged' })).status, 404);
      // A tenant that is not writable: the hold, workspace and kill switch are refused with 423.
      await setTenantStatus('suspended');
      try {
        const refused = [
          await send(owner, 'POST', '/v1/m/compliance/holds', { scope: 'tenant', matter: 'Suspended', reason: 'refused' }),
          await send(owner, 'POST', '/v1/workspaces', { root_path: '/srv/suspended' }),
          await send(owner, 'POST', `${G}/pep/kill-switches`, { reason: 'refused' }),
        ];
        assert.deepEqual(refused.map((r) => [r.status, r.json().error.code]), Array(3).fill([423, 'tenant_suspended']));
      } finally {
        await setTenantStatus('active');
      }
      const sentinel = await ok(owner, 'POST', '/v1/workspaces', { root_path: '/srv/sentinel' }, 201);
      const log = (await logged()).slice(before);
      assert.deepEqual(
        log.map((e) => [e.type, e.subject]),
        [
          ['workspace.created', `workspace/${ws.id}`],
          ['approval.requested', `approval/${approval.id}`],
          ['workspace.created', `workspace/${sentinel.id}`],
        ],
        'only the acknowledged changes',
      );
      await waitFor(() => delivered().some((e) => e.subject === `workspace/${sentinel.id}`), 30_000, 'the sentinel delivery');
      const got = delivered();
      assert.ok(!got.some((e) => e.type === 'workspace.updated' && e.subject === `workspace/${ws.id}`));
      assert.ok(!got.some((e) => e.type === 'approval.resolved' && e.subject === `approval/${approval.id}`));
      assert.ok(!got.some((e) => e.type === 'hold.placed' && e.data['matter'] === 'Suspended'));
      assert.ok(!got.some((e) => e.type === 'killswitch.released' && e.subject === 'kill_switch/agent:never-engaged'));
      assert.ok(!got.some((e) => e.subject === 'kill_switch/tenant'));
    });
  });
}
