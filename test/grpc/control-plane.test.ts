/**
 * ControlPlane over gRPC against the real `svc serve`: the same answers, rules and audit as REST
 * (DECISIONS.md "gRPC" shapes and status mapping), reflection for generic clients (`buf curl`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { REPO_ROOT } from '../helpers/server.js';
import { bearer, controlPlane, createOrg, issueToken, startCore, unary, type Core } from './harness.js';

const run = promisify(execFile);

describe('ControlPlane over gRPC', () => {
  let core: Core;
  let cp: ReturnType<typeof controlPlane>;
  let orgB: string;

  before(async () => {
    core = await startCore();
    cp = controlPlane(core);
    orgB = await createOrg(core, 'Org B');
  });
  after(async () => {
    cp?.close();
    await core?.server.stop();
  });

  test('GetServerInfo answers like GET /v1/server-info, without a credential', async () => {
    const r = await unary(cp, 'GetServerInfo', {});
    assert.ok(r.ok, r.ok ? '' : r.error.details);
    const rest = (await core.rest('GET', '/v1/server-info')).json();
    assert.deepEqual(r.value, { version: rest.version, engine: rest.engine.http, setup_required: false });
  });

  test('no or a wrong credential → UNAUTHENTICATED; the REST error code rides in metadata', async () => {
    const none = await unary(cp, 'ListAgents', { tenant: core.tenant });
    assert.equal(none.ok, false);
    if (!none.ok) {
      assert.equal(none.error.code, status.UNAUTHENTICATED);
      assert.deepEqual(none.error.metadata.get('svc-error-code'), ['unauthenticated']);
    }
    const wrong = await unary(cp, 'ListAgents', { tenant: core.tenant }, bearer('svck_AAAAAAAAAAAAAAAAAAAAAAAAAA_' + 'A'.repeat(52)));
    assert.equal(!wrong.ok && wrong.error.code, status.UNAUTHENTICATED);
  });

  test('CreateAgent, GetAgent, ListAgents: the REST agent, audited in the tenant chain', async () => {
    const md = bearer(core.session);
    const created = await unary(cp, 'CreateAgent', { tenant: core.tenant, name: 'grpc-made', external_id: 'ext-grpc-1' }, md);
    assert.ok(created.ok, created.ok ? '' : created.error.details);
    const a = created.value;
    assert.equal(a.tenant_id, core.tenant);
    assert.equal(a.kind, 'agent');
    assert.equal(a.status, 'active');
    assert.equal(a.version, 1);
    assert.match(a.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/);
    const viaRest = await core.rest('GET', `/v1/agents/${a.id}`, { token: core.session, tenant: core.tenant });
    assert.equal(viaRest.status, 200);
    const { labels: _l, ...restAgent } = viaRest.json();
    assert.deepEqual({ ...a, version: Number(a.version) }, restAgent);
    const got = await unary(cp, 'GetAgent', { tenant: core.tenant, id: a.id }, md);
    assert.ok(got.ok);
    assert.deepEqual(got.value, a);
    const list = await unary(cp, 'ListAgents', { tenant: core.tenant, limit: 1000 }, md);
    assert.ok(list.ok);
    assert.ok(list.value.agents.some((x: { id: string }) => x.id === a.id));
    assert.equal(list.value.has_more, false);
    const audit = await core.rest('GET', '/v1/audit?action=agent.create&limit=1000', { token: core.session, tenant: core.tenant });
    assert.ok((audit.json().items as Array<{ target_id: string }>).some((r) => r.target_id === a.id), audit.text);
  });

  test('status mapping: 400 INVALID_ARGUMENT, 404 NOT_FOUND (other tenant too), 403 PERMISSION_DENIED, 409 ABORTED', async () => {
    const md = bearer(core.session);
    const badId = await unary(cp, 'GetAgent', { tenant: core.tenant, id: 'not-a-uuid' }, md);
    assert.equal(!badId.ok && badId.error.code, status.INVALID_ARGUMENT);
    const badTenant = await unary(cp, 'ListAgents', { tenant: 'nope' }, md);
    assert.equal(!badTenant.ok && badTenant.error.code, status.INVALID_ARGUMENT);
    const a = await unary(cp, 'CreateAgent', { tenant: core.tenant, name: 'only-in-a', external_id: 'ext-a-only' }, md);
    assert.ok(a.ok);
    const elsewhere = await unary(cp, 'GetAgent', { tenant: orgB, id: a.value.id }, md);
    assert.equal(!elsewhere.ok && elsewhere.error.code, status.NOT_FOUND);
    const dup = await unary(cp, 'CreateAgent', { tenant: core.tenant, name: 'dup', external_id: 'ext-a-only' }, md);
    assert.equal(!dup.ok && dup.error.code, status.ABORTED);
    const viewer = await issueToken(core, core.tenant, 'viewer');
    const denied = await unary(cp, 'CreateAgent', { tenant: core.tenant, name: 'by-viewer' }, bearer(viewer));
    assert.equal(!denied.ok && denied.error.code, status.PERMISSION_DENIED);
    const boundElsewhere = await unary(cp, 'ListAgents', { tenant: orgB }, bearer(viewer));
    assert.equal(!boundElsewhere.ok && boundElsewhere.error.code, status.PERMISSION_DENIED);
    const missingName = await unary(cp, 'CreateAgent', { tenant: core.tenant }, md);
    assert.equal(!missingName.ok && missingName.error.code, status.INVALID_ARGUMENT);
  });

  test('VerifyAudit reports the tenant chain as GET /v1/audit/verify does', async () => {
    const r = await unary(cp, 'VerifyAudit', { tenant: core.tenant }, bearer(core.session));
    assert.ok(r.ok, r.ok ? '' : r.error.details);
    const rest = (await core.rest('GET', '/v1/audit/verify', { token: core.session, tenant: core.tenant })).json();
    assert.equal(r.value.chain_ok, true);
    assert.equal(r.value.checkpoint_status, rest.checkpoints.status);
    assert.ok(Number(r.value.checked) >= 1);
    assert.ok(Number(r.value.checked) <= rest.chain.checked);
  });

  test('buf curl lists every service by reflection (Health included) and calls Health/Check and GetServerInfo over TLS', async () => {
    const ca = path.join(core.server.dataDir, 'grpc-ca.pem');
    writeFileSync(ca, core.server.certPem as string);
    const buf = path.join(REPO_ROOT, 'node_modules', '.bin', 'buf');
    const url = `https://127.0.0.1:${core.server.grpcPort}`;
    const list = await run(buf, ['curl', '--protocol', 'grpc', '--list-methods', '--cacert', ca, url], { timeout: 60_000 });
    const methods = list.stdout.trim().split('\n');
    for (const m of [
      'grpc.health.v1.Health/Check',
      'grpc.health.v1.Health/List',
      'olivares.api.v1.ControlPlane/GetServerInfo',
      'olivares.api.v1.ControlPlane/VerifyAudit',
      'olivares.api.v1.Ingest/Push',
      'olivares.api.v1.ControlPlane/CreateAgent',
    ])
      assert.ok(methods.includes(m), list.stdout);
    const services = (await run(buf, ['curl', '--protocol', 'grpc', '--list-services', '--cacert', ca, url], { timeout: 60_000 })).stdout
      .trim()
      .split('\n');
    for (const name of ['grpc.health.v1.Health', 'olivares.api.v1.ControlPlane', 'olivares.api.v1.Ingest'])
      assert.ok(services.includes(name), services.join('\n'));
    // Health's descriptor resolves too: buf curl can build the call from reflection alone.
    const health = await run(
      buf,
      ['curl', '--protocol', 'grpc', '--cacert', ca, '-d', '{"service":"olivares.api.v1.Ingest"}', `${url}/grpc.health.v1.Health/Check`],
      { timeout: 60_000 },
    );
    assert.equal(JSON.parse(health.stdout).status, 'SERVING');
    const info = await run(buf, ['curl', '--protocol', 'grpc', '--cacert', ca, `${url}/olivares.api.v1.ControlPlane/GetServerInfo`], {
      timeout: 60_000,
    });
    const body = JSON.parse(info.stdout);
    assert.equal(body.engine, (await core.rest('GET', '/v1/server-info')).json().engine.http);
    assert.equal(typeof body.version, 'string');
    const agents = await run(
      buf,
      [
        'curl',
        '--protocol',
        'grpc',
        '--cacert',
        ca,
        '-H',
        `authorization: Bearer ${core.session}`,
        '-d',
        JSON.stringify({ tenant: core.tenant }),
        `${url}/olivares.api.v1.ControlPlane/ListAgents`,
      ],
      { timeout: 60_000 },
    );
    assert.ok(Array.isArray(JSON.parse(agents.stdout).agents));
  });
});
