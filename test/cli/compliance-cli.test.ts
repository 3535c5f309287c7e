/**
 * The compliance commands end to end against the real server: holds place/ls/get/check/events,
 * release (-y required when not interactive; 202 pending then released with --approval), erasure
 * register/ls/get/execute (-y; refused under a hold, exit 1 with legal_hold) and receipt.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jsonOut, runSvc } from './harness.js';
import { call, startServer, type TestServer } from '../helpers/server.js';

describe('svc compliance', () => {
  let server: TestServer;
  let owner: string;
  let tenant: string;
  const editors: string[] = [];
  const send = (token: string, method: string, p: string, body: unknown) =>
    call(server, method, p, {
      headers: { authorization: `Bearer ${token}`, 'x-service-tenant': tenant, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const svc = (token: string, args: string[]) =>
    runSvc([...args, '--server', server.url, '--pin-sha256', server.pinSha256 as string, '--tenant', tenant], {
      env: { SERVICE_TOKEN: token },
    });
  const approveAll = async (approvalId: string) => {
    for (const e of editors)
      assert.equal((await svc(e, ['governance', 'approvals', 'approve', approvalId, '--reason', 'checked'])).code, 0);
  };

  before(async () => {
    server = await startServer({ env: { SERVICE_RATE_LIMIT_RPS: '0' } });
    const token = /setup token: (svcst_[A-Z2-7]{52})/.exec(server.stdout())?.[1] as string;
    const json = { 'content-type': 'application/json' };
    const setup = await call(server, 'POST', '/v1/setup', {
      body: JSON.stringify({ token, email: 'o@example.test', password: 'owner password 123', organization: 'Acme' }),
      headers: json,
    });
    tenant = setup.json().organization.id;
    owner = (
      await call(server, 'POST', '/v1/auth/login', {
        body: JSON.stringify({ email: 'o@example.test', password: 'owner password 123' }),
        headers: json,
      })
    ).json().token;
    for (const email of ['e1@example.test', 'e2@example.test']) {
      assert.equal((await send(owner, 'POST', '/v1/users', { email, password: 'a long enough password', role: 'editor' })).status, 201);
      editors.push(
        (
          await call(server, 'POST', '/v1/auth/login', {
            body: JSON.stringify({ email, password: 'a long enough password' }),
            headers: json,
          })
        ).json().token,
      );
    }
  });
  after(async () => server?.stop());

  it('holds: place, ls --status, get, check, release (-y, pending, then released), events', async () => {
    assert.equal((await send(owner, 'POST', '/v1/agents', { name: 'a-1' })).status, 201);
    const placed = await svc(owner, [
      'compliance',
      'holds',
      'place',
      '--subject-kind',
      'agent',
      '--subject-ref',
      'a-1',
      '--matter',
      'M',
      '--reason',
      'R',
      '-o',
      'json',
    ]);
    assert.equal(placed.code, 0, placed.stderr);
    const h = jsonOut(placed);
    assert.equal(h.status, 'active');
    assert.ok(
      jsonOut(await svc(owner, ['compliance', 'holds', 'ls', '--status', 'active', '-o', 'json'])).items.some(
        (i: { id: string }) => i.id === h.id,
      ),
    );
    assert.equal(jsonOut(await svc(owner, ['compliance', 'holds', 'get', h.id, '-o', 'json'])).matter, 'M');
    assert.equal(
      jsonOut(await svc(owner, ['compliance', 'holds', 'check', '--subject-kind', 'agent', '--subject-ref', 'a-1', '-o', 'json'])).held,
      true,
    );
    assert.equal((await svc(owner, ['compliance', 'holds', 'release', h.id])).code, 2, 'release needs -y when not interactive');
    const pending = jsonOut(await svc(owner, ['compliance', 'holds', 'release', h.id, '-y', '-o', 'json']));
    assert.equal(pending.status, 'pending_approval');
    await approveAll(pending.approval_id);
    const released = await svc(owner, ['compliance', 'holds', 'release', h.id, '--approval', pending.approval_id, '-y', '-o', 'json']);
    assert.equal(jsonOut(released).status, 'released', released.stderr);
    const events = jsonOut(await svc(owner, ['compliance', 'holds', 'events', h.id, '-o', 'json'])).items.map(
      (e: { event: string }) => e.event,
    );
    assert.deepEqual(events, ['placed', 'release_requested', 'approved', 'released']);
  });

  it('erasure: register, ls, get, execute refused under a hold, then pending and completed; receipt; events', async () => {
    const e = jsonOut(
      await svc(owner, [
        'compliance',
        'erasure',
        'register',
        '--case',
        'DSR-1',
        '--subject-kind',
        'person',
        '--subject-ref',
        'u-1',
        '--alias',
        'u-1-old',
        '-o',
        'json',
      ]),
    );
    assert.equal(e.status, 'received');
    assert.equal(e.subject_kind, 'person');
    assert.ok(jsonOut(await svc(owner, ['compliance', 'erasure', 'ls', '-o', 'json'])).items.some((i: { id: string }) => i.id === e.id));
    assert.deepEqual(jsonOut(await svc(owner, ['compliance', 'erasure', 'get', e.id, '-o', 'json'])).aliases, ['u-1-old']);
    const hold = jsonOut(
      await svc(owner, [
        'compliance',
        'holds',
        'place',
        '--subject-kind',
        'person',
        '--subject-ref',
        'u-1-old',
        '--matter',
        'M',
        '--reason',
        'R',
        '-o',
        'json',
      ]),
    );
    assert.equal((await svc(owner, ['compliance', 'erasure', 'execute', e.id])).code, 2, 'execute needs -y when not interactive');
    const refused = await svc(owner, ['compliance', 'erasure', 'execute', e.id, '-y']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /legal_hold/);
    const rel = jsonOut(await svc(owner, ['compliance', 'holds', 'release', hold.id, '-y', '-o', 'json']));
    await approveAll(rel.approval_id);
    assert.equal((await svc(owner, ['compliance', 'holds', 'release', hold.id, '--approval', rel.approval_id, '-y'])).code, 0);
    const pending = jsonOut(await svc(owner, ['compliance', 'erasure', 'execute', e.id, '-y', '-o', 'json']));
    assert.equal(pending.status, 'pending_approval');
    await approveAll(pending.approval_id);
    const done = await svc(owner, ['compliance', 'erasure', 'execute', e.id, '--approval', pending.approval_id, '-y', '-o', 'json']);
    assert.equal(jsonOut(done).status, 'completed', done.stderr);
    const receipt = jsonOut(await svc(owner, ['compliance', 'erasure', 'receipt', e.id, '-o', 'json']));
    assert.equal(receipt.approval_id, pending.approval_id);
    assert.equal(receipt.approvers.length, 2);
    const custody = await svc(owner, ['compliance', 'erasure', 'events', e.id, '-o', 'json']);
    assert.equal(custody.code, 0, custody.stderr);
    const steps = jsonOut(custody).items as Array<{ event: string; ledger_seq: number }>;
    assert.ok(steps.length >= 2 && steps.every((x) => x.ledger_seq > 0), JSON.stringify(steps));
    assert.match((await svc(owner, ['compliance', 'erasure', 'events', e.id])).stdout, /^EVENT\s+SEQ\s+HASH/im);
  });

  it("a hold placed by an agent's name holds it: agent rm exits 5 (legal_hold); a typo exits 4; two of a name exit 5", async () => {
    const hold = (ref: string) =>
      svc(owner, [
        ...['compliance', 'holds', 'place', '--subject-kind', 'agent', '--subject-ref', ref],
        ...['--matter', 'M', '--reason', 'R', '-o', 'json'],
      ]);
    const made = await send(owner, 'POST', '/v1/agents', { name: 'payments-copilot', external_id: 'ext-payments' });
    assert.equal(made.status, 201);
    const id = made.json().id as string;
    const typo = await hold('payment-copilot');
    assert.equal(typo.code, 4, typo.stderr);
    assert.match(typo.stderr, /not_found/);
    assert.match(typo.stderr, /did you mean "payments-copilot"/);
    assert.equal(
      (jsonOut(await svc(owner, ['compliance', 'holds', 'ls', '-o', 'json'])).items as Array<{ subject_ref: string }>).filter(
        (h) => h.subject_ref === 'payment-copilot',
      ).length,
      0,
      'nothing stored for the typo',
    );
    const placed = await hold('payments-copilot');
    assert.equal(placed.code, 0, placed.stderr);
    assert.equal(jsonOut(placed).subject_ref, id, 'stored by id');
    const rm = await svc(owner, ['agent', 'rm', 'payments-copilot', '-y']);
    assert.equal(rm.code, 5, rm.stderr);
    assert.match(rm.stderr, /legal_hold/);
    assert.equal((await send(owner, 'GET', `/v1/agents/${id}`, undefined)).status, 200, 'the held agent is still there');
    assert.equal((await send(owner, 'POST', '/v1/agents', { name: 'twin' })).status, 201);
    assert.equal((await send(owner, 'POST', '/v1/agents', { name: 'twin' })).status, 201);
    const twins = await hold('twin');
    assert.equal(twins.code, 5, twins.stderr);
    assert.match(twins.stderr, /ambiguous/);
  });
});
