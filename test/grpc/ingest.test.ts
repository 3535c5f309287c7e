/**
 * Ingest over gRPC against the real `svc serve`: durable acks (edges in the store, one ledger
 * record per batch whose payload_hash covers the items), idempotency on the batch id, per-item
 * rejection, and the refusals (wrong tenant, missing permission, expired token, oversize message)
 * that never stop the server from serving other streams.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { bearer, createAgent, createOrg, edge, ingestClient, issueToken, push, startCore, type Core } from './harness.js';

describe('Ingest over gRPC', () => {
  let core: Core;
  let client: ReturnType<typeof ingestClient>;
  let orgB: string;
  let tokenA: string;
  let tokenB: string;

  const edges = async (tenant: string, query = '') => {
    const res = await core.rest('GET', `/v1/access-edges?limit=1000${query}`, { token: core.session, tenant });
    assert.equal(res.status, 200, res.text);
    return res.json().items as Array<{
      origin_kind: string;
      origin_id: string;
      resource_name: string | null;
      mode: string;
      observed_count: number;
      confidence: string;
      signal_source: string;
    }>;
  };

  before(async () => {
    core = await startCore();
    client = ingestClient(core);
    orgB = await createOrg(core, 'Org B');
    tokenA = await issueToken(core, core.tenant, 'admin');
    tokenB = await issueToken(core, orgB, 'admin');
    await createAgent(core, core.tenant, 'agent-one', 'agent-ext-1');
  });
  after(async () => {
    client?.close();
    await core?.server.stop();
  });

  test('a batch is acked once durable: edges in the tenant, one ingest.batch ledger record, a re-send counts nothing twice', async () => {
    const batch = {
      batch_id: randomUUID(),
      collector: 'test-1',
      edges: [
        edge({ resource_ref: 'file:///etc/app.conf', count: 3 }),
        edge({ origin_kind: 'agent', origin_ref: 'agent-ext-1', resource_ref: 'file:///etc/app.conf', mode: 'rw', confidence: 'medium' }),
      ],
      findings: [{ rule: 'secret-in-file', severity: 'high', subject: 'file:///etc/app.conf', message: 'token found' }],
      costs: [{ agent: 'agent-ext-1', model: 'm', input_tokens: 10, output_tokens: 5, cost_micros: 1200, currency: 'USD' }],
    };
    const first = await push(client, bearer(tokenA), [batch]);
    assert.equal(first.error, undefined, first.error?.details);
    assert.equal(first.acks.length, 1);
    const ack = first.acks[0];
    assert.equal(ack.status, 'ACCEPTED');
    assert.equal(ack.accepted, 4);
    assert.deepEqual(ack.rejected, []);
    assert.ok(Number(ack.ledger_seq) > 0);
    const conf = (await edges(core.tenant)).filter((e) => e.resource_name === 'file:///etc/app.conf');
    assert.equal(conf.length, 2);
    assert.equal(conf.find((e) => e.origin_kind === 'identity')?.observed_count, 3);
    assert.equal(conf.find((e) => e.origin_kind === 'agent')?.mode, 'rw');
    const audit = await core.rest('GET', `/v1/audit?from=${ack.ledger_seq}&limit=1`, { token: core.session, tenant: core.tenant });
    const rec = audit.json().items[0];
    assert.equal(rec.action, 'ingest.batch');
    assert.equal(rec.target_id, batch.batch_id);
    assert.match(rec.payload_hash, /^[0-9a-f]{64}$/);
    assert.equal(JSON.parse(rec.meta).accepted, 4);

    const again = await push(client, bearer(tokenA), [batch]);
    assert.equal(again.acks[0]?.status, 'DUPLICATE');
    assert.equal(again.acks[0]?.ledger_seq, ack.ledger_seq);
    assert.equal(again.acks[0]?.accepted, 4);
    const after = (await edges(core.tenant)).filter((e) => e.resource_name === 'file:///etc/app.conf');
    assert.equal(after.find((e) => e.origin_kind === 'identity')?.observed_count, 3, 'a re-sent batch is not counted twice');
    const records = await core.rest('GET', '/v1/audit?action=ingest.batch&limit=1000', { token: core.session, tenant: core.tenant });
    assert.equal((records.json().items as Array<{ target_id: string }>).filter((r) => r.target_id === batch.batch_id).length, 1);
    // Nothing leaked into the other tenant.
    assert.equal((await edges(orgB)).length, 0);
  });

  test('bad items are rejected one by one with a reason; the rest of the batch is stored', async () => {
    const batch = {
      batch_id: randomUUID(),
      edges: [
        edge({ resource_ref: 'db://orders', mode: 'rwx' }),
        edge({ resource_ref: 'db://orders', origin_kind: 'robot' }),
        edge({ resource_ref: 'db://orders', confidence: '' }),
        edge({ resource_ref: '' }),
        edge({ resource_ref: 'db://orders', signal_source: '' }),
        edge({ resource_ref: 'db://orders', origin_kind: 'agent', origin_ref: 'no-such-agent' }),
        edge({ resource_ref: 'db://orders', observed_at: 'yesterday' }),
        edge({ resource_ref: 'db://orders', origin_id: randomUUID() }),
        edge({ resource_ref: 'db://orders' }),
      ],
      findings: [{ rule: 'r', severity: 'catastrophic' }],
      costs: [{ agent: 'a', model: 'm', currency: 'dollars' }],
    };
    const r = await push(client, bearer(tokenA), [batch]);
    assert.equal(r.error, undefined, r.error?.details);
    const ack = r.acks[0];
    assert.equal(ack.status, 'ACCEPTED');
    assert.equal(ack.accepted, 1);
    const reasons = new Map(
      (ack.rejected as Array<{ kind: string; index: number; reason: string }>).map((x) => [`${x.kind}:${x.index}`, x.reason]),
    );
    assert.equal(reasons.size, 10, JSON.stringify(ack.rejected));
    assert.match(reasons.get('edge:0') as string, /unknown mode "rwx"/);
    assert.match(reasons.get('edge:1') as string, /unknown origin_kind "robot"/);
    assert.match(reasons.get('edge:2') as string, /confidence is required/);
    assert.match(reasons.get('edge:3') as string, /resource_id or resource_ref is required/);
    assert.match(reasons.get('edge:4') as string, /signal_source is required/);
    assert.match(reasons.get('edge:5') as string, /unknown agent no-such-agent/);
    assert.match(reasons.get('edge:6') as string, /observed_at/);
    assert.match(reasons.get('edge:7') as string, /give origin_id or origin_ref, not both/);
    assert.match(reasons.get('finding:0') as string, /unknown severity/);
    assert.match(reasons.get('cost:0') as string, /currency/);
    const stored = (await edges(core.tenant)).filter((e) => e.resource_name === 'db://orders');
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.observed_count, 1);
  });

  test('a batch without a usable id is answered REJECTED and the stream carries on', async () => {
    const good = { batch_id: randomUUID(), edges: [edge({ resource_ref: 'after-rejected' })] };
    const r = await push(client, bearer(tokenA), [{ batch_id: 'not-a-uuid', edges: [edge()] }, good]);
    assert.equal(r.error, undefined, r.error?.details);
    const byId = new Map(r.acks.map((a) => [a.batch_id, a]));
    assert.equal(byId.get('not-a-uuid')?.status, 'REJECTED');
    assert.match(byId.get('not-a-uuid')?.error, /batch_id must be a UUID/);
    assert.equal(byId.get(good.batch_id)?.status, 'ACCEPTED');
  });

  test('refusals: no token, other tenant, missing ingest:write, expired token', async () => {
    const none = await push(client, bearer(undefined), [{ batch_id: randomUUID(), edges: [edge()] }]);
    assert.equal(none.error?.code, status.UNAUTHENTICATED);
    // Token of tenant B naming tenant A: refused before anything is read.
    const wrongTenant = await push(client, bearer(tokenB, core.tenant), [
      { batch_id: randomUUID(), edges: [edge({ resource_ref: 'wrong-tenant' })] },
    ]);
    assert.equal(wrongTenant.error?.code, status.PERMISSION_DENIED);
    assert.equal(wrongTenant.acks.length, 0);
    const editor = await issueToken(core, core.tenant, 'editor');
    const noPerm = await push(client, bearer(editor), [{ batch_id: randomUUID(), edges: [edge({ resource_ref: 'by-editor' })] }]);
    assert.equal(noPerm.error?.code, status.PERMISSION_DENIED);
    assert.equal((await edges(core.tenant)).filter((e) => ['wrong-tenant', 'by-editor'].includes(e.resource_name ?? '')).length, 0);
    // A token that expires while its stream is open: the next batch ends the stream.
    const expiresAt = new Date(Date.now() + 2500).toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
    const shortLived = await issueToken(core, core.tenant, 'admin', expiresAt);
    const stream = client['Push'](bearer(shortLived), { deadline: Date.now() + 30_000 });
    const acks: any[] = [];
    const ended = new Promise<{ code?: number }>((resolve) => {
      stream.on('data', (a: unknown) => acks.push(a));
      stream.on('error', (e: { code: number }) => resolve(e));
      stream.on('end', () => resolve({}));
    });
    stream.write({ batch_id: randomUUID(), edges: [edge({ resource_ref: 'before-expiry' })] });
    while (acks.length === 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt) - Date.now() + 300)));
    stream.write({ batch_id: randomUUID(), edges: [edge({ resource_ref: 'after-expiry' })] });
    const end = await ended;
    assert.equal(end.code, status.UNAUTHENTICATED);
    const names = (await edges(core.tenant)).map((e) => e.resource_name);
    assert.ok(names.includes('before-expiry'));
    assert.ok(!names.includes('after-expiry'));
  });

  test('an oversize message ends only its own stream (RESOURCE_EXHAUSTED); others keep being served', async () => {
    const big = {
      batch_id: randomUUID(),
      edges: Array.from({ length: 9000 }, (_, i) => edge({ resource_ref: `r-${i}-${'x'.repeat(500)}` })),
    };
    const big2 = ingestClient(core, undefined, { 'grpc.max_send_message_length': 64 * 1024 * 1024 });
    try {
      const r = await push(big2, bearer(tokenA), [big]);
      assert.equal(r.error?.code, status.RESOURCE_EXHAUSTED, r.error?.details);
    } finally {
      big2.close();
    }
    const ok = await push(client, bearer(tokenA), [{ batch_id: randomUUID(), edges: [edge({ resource_ref: 'after-oversize' })] }]);
    assert.equal(ok.acks[0]?.status, 'ACCEPTED');
  });

  test('many batches on one stream: every one acked, counts add up, the chain verifies', async () => {
    const batches = Array.from({ length: 40 }, (_, i) => ({
      batch_id: randomUUID(),
      edges: Array.from({ length: 25 }, (_, j) =>
        edge({ resource_ref: `bulk-${j}`, observed_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000000000Z` }),
      ),
    }));
    const r = await push(client, bearer(tokenA), batches);
    assert.equal(r.error, undefined, r.error?.details);
    assert.equal(r.acks.length, 40);
    assert.ok(r.acks.every((a) => a.status === 'ACCEPTED'));
    const bulk = (await edges(core.tenant)).filter((e) => (e.resource_name ?? '').startsWith('bulk-'));
    assert.equal(bulk.length, 25);
    assert.ok(bulk.every((e) => e.observed_count === 40));
    const v = await core.rest('GET', '/v1/audit/verify', { token: core.session, tenant: core.tenant });
    assert.equal(v.json().chain.ok, true, v.text);
  });
});
