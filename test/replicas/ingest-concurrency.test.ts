/**
 * Concurrent writers introducing the same new natural keys (access-map resources and identities,
 * findings) through REST and gRPC, on one replica and on two replicas of one PostgreSQL database:
 * no request answers 5xx and no batch is refused for a unique-key race (issue 37 item 2).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Metadata, credentials, type Client } from '@grpc/grpc-js';
import { serviceClient } from '../../src/grpc/proto.js';
import type { TestServer } from '../helpers/server.js';
import { SETTLE_MS } from '../../src/modules/security/collector-sync.js';
import { assertVerifiesEverywhere, deploy, replicaSkip, rest, setup, type Deployment } from './harness.js';

const skip = await replicaSkip();

function ingest(server: TestServer, certPem: string): Client & Record<string, any> {
  const C = serviceClient('Ingest');
  return new C(`127.0.0.1:${server.grpcPort}`, credentials.createSsl(Buffer.from(certPem))) as unknown as Client & Record<string, any>;
}

function push(
  client: Record<string, any>,
  token: string,
  batches: unknown[],
): Promise<{ acks: any[]; error?: { code: number; details: string } }> {
  return new Promise((resolve) => {
    const md = new Metadata();
    md.set('authorization', `Bearer ${token}`);
    const acks: any[] = [];
    const stream = client['Push'](md, { deadline: Date.now() + 60_000 });
    stream.on('data', (a: unknown) => acks.push(a));
    stream.on('error', (error: { code: number; details: string }) => resolve({ acks, error }));
    stream.on('end', () => resolve({ acks }));
    for (const b of batches) stream.write(b);
    stream.end();
  });
}

describe('concurrent writers introducing the same natural keys on PostgreSQL', { skip }, () => {
  let dep: Deployment;
  let session: string;
  let tenant: string;
  let key: string;
  let certPem: string;

  before(async () => {
    dep = await deploy(2);
    ({ session, tenant } = await setup(dep));
    const t = await rest(dep.replicas[0] as TestServer, 'POST', '/v1/tokens', {
      token: session,
      tenant,
      body: { name: 'ingest', role: 'admin', tenant },
    });
    assert.equal(t.status, 201, t.text);
    key = t.json().token;
    const a = await rest(dep.replicas[0] as TestServer, 'POST', '/v1/agents', {
      token: session,
      tenant,
      body: { name: 'agent-x', external_id: 'agent-x' },
    });
    assert.equal(a.status, 201, a.text);
    certPem = dep.replicas[0]?.certPem as string;
  });
  after(async () => dep?.stop());

  const observe = (round: string, i: number) => ({
    observations: [
      ...Array.from({ length: 6 }, (_, k) => ({
        origin: { kind: 'agent', ref: 'agent-x' },
        resource: { ref: `s3://${round}/shared-${k}` },
        mode: 'r',
        confidence: 'high',
        signal_source: 'test',
      })),
      {
        origin: { kind: 'agent', ref: 'agent-x' },
        resource: { ref: `s3://${round}/own-${i}` },
        mode: 'rw',
        confidence: 'high',
        signal_source: 'test',
      },
    ],
  });

  async function restRound(round: string, targets: TestServer[]): Promise<void> {
    const res = await Promise.all(
      Array.from({ length: 48 }, (_, i) =>
        rest(targets[i % targets.length] as TestServer, 'POST', '/v1/m/accessmap/observations', {
          token: key,
          tenant,
          body: observe(round, i),
        }),
      ),
    );
    const failed = res.filter((r) => r.status !== 200);
    assert.deepEqual(failed.map((r) => `${r.status} ${r.text}`), [], 'every request answers 200');
    const edges = await rest(targets[0] as TestServer, 'GET', `/v1/access-edges?limit=1000`, { token: session, tenant });
    const names = new Set(
      (edges.json().items as Array<{ resource_name: string }>).map((e) => e.resource_name).filter((n) => n?.startsWith(`s3://${round}/`)),
    );
    assert.equal(names.size, 6 + 48, 'one node per natural key, every edge present');
  }

  test('REST observations from 48 clients through one replica', async () => restRound('one', [dep.replicas[0] as TestServer]));

  test('REST observations from 48 clients through two replicas', async () => restRound('two', dep.replicas));

  test('gRPC batches through two replicas: every batch ACCEPTED, none UNAVAILABLE', async () => {
    const clients = dep.replicas.map((r) => ingest(r, certPem));
    try {
      const batch = (i: number) => ({
        batch_id: randomUUID(),
        collector: `c-${i}`,
        edges: [
          ...Array.from({ length: 5 }, (_, k) => ({
            origin_kind: 'identity',
            origin_ref: `grpc-id-${k}`,
            resource_ref: `file:///grpc/shared-${k}`,
            mode: 'r',
            confidence: 'high',
            signal_source: 'test',
          })),
          {
            origin_kind: 'identity',
            origin_ref: 'grpc-id-0',
            resource_ref: `file:///grpc/own-${i}`,
            mode: 'r',
            confidence: 'high',
            signal_source: 'test',
          },
        ],
        findings: [{ rule: 'secret-in-file', severity: 'high', subject: 'file:///grpc/shared-0', message: 'token found' }],
        costs: [],
      });
      // 12 streams of 2 batches each, spread over both replicas, all at once.
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, s) =>
          push(clients[s % clients.length] as Record<string, any>, key, [batch(2 * s), batch(2 * s + 1)]),
        ),
      );
      for (const r of results) {
        assert.equal(r.error, undefined, r.error?.details);
        assert.deepEqual(r.acks.map((a) => a.status), ['ACCEPTED', 'ACCEPTED'], JSON.stringify(r.acks));
      }
      // Collector items are folded into findings once they are SETTLE_MS old (collector-sync.ts), by
      // whichever replica reads first; poll a little past that.
      let mine: Array<{ subject_ref: string; occurrences: number }> = [];
      for (const deadline = Date.now() + SETTLE_MS + 15_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
        const findings = await rest(dep.replicas[1] as TestServer, 'GET', '/v1/m/security/findings?rule_id=secret-in-file&limit=100', {
          token: session,
          tenant,
        });
        assert.equal(findings.status, 200, findings.text);
        mine = (findings.json().items as typeof mine).filter((f) => f.subject_ref === 'file:///grpc/shared-0');
        if (mine[0]?.occurrences === 24) break;
      }
      assert.equal(mine.length, 1, 'one finding per natural key');
      assert.equal(mine[0]?.occurrences, 24, 'every report counted once');
    } finally {
      for (const c of clients) c.close();
    }
  });

  test('the chain verifies on every replica', async () => assertVerifiesEverywhere(dep, session, tenant));
});
