/**
 * The core areas announce their changes on the bus after they commit: agents, workspaces and the
 * access map's REST ingest, seen by an in-process subscriber of a real server over HTTPS. A refused
 * change (409, 400) announces nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { Agent, request } from 'undici';
import { resolveServeConfig } from '../../src/serve/config.js';
import { startServer, type RunningServer } from '../../src/serve/server.js';
import type { BusEvent } from '../../src/events/event-types.js';

let server: RunningServer;
let dispatcher: Agent;
let token: string;
const seen: BusEvent[] = [];

async function send(method: string, p: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await request(`${server.url}${p}`, {
    method: method as 'GET',
    dispatcher,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

before(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-events-'));
  const config = resolveServeConfig(
    { dataDir, listen: '127.0.0.1:0', grpcListen: '127.0.0.1:0', seedDemo: true },
    { ...process.env, SERVICE_AUDIT_CHECKPOINT_INTERVAL: '0' },
  );
  server = await startServer(config, pino({ level: 'silent' }));
  dispatcher = new Agent({ connect: { ca: readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
  server.services.events.subscribe({ name: 'test', types: '*' }, (e) => void seen.push(e));
  const login = await request(`${server.url}/v1/auth/login`, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@demo.local', password: 'demo-password-1234' }),
  });
  token = ((await login.body.json()) as { token: string }).token;
});
after(async () => {
  await server?.shutdown('test done');
  await dispatcher?.close();
});

describe('core areas publish on the bus', () => {
  it('agent create, update, delete and workspace create, update announce themselves in order; refusals announce nothing', async () => {
    const a = await send('POST', '/v1/agents', { name: 'bus-agent' });
    assert.equal(a.status, 201);
    assert.equal((await send('PATCH', `/v1/agents/${a.json.id}`, { version: 1, name: 'renamed' })).status, 200);
    assert.equal((await send('PATCH', `/v1/agents/${a.json.id}`, { version: 1, name: 'stale' })).status, 409);
    assert.equal((await send('POST', '/v1/agents', { name: 'x', colour: 'red' })).status, 400);
    assert.equal((await send('DELETE', `/v1/agents/${a.json.id}`)).status, 204);
    const w = await send('POST', '/v1/workspaces', { root_path: '/srv/bus', display_name: 'bus' });
    assert.equal(w.status, 201, JSON.stringify(w.json));
    assert.equal((await send('PATCH', `/v1/workspaces/${w.json.id}`, { version: 1, display_name: 'bus 2' })).status, 200);
    await server.services.events.idle();
    const mine = seen.filter((e) => e.subject === `agent/${a.json.id}` || e.subject === `workspace/${w.json.id}`);
    assert.deepEqual(
      mine.map((e) => e.type),
      ['agent.created', 'agent.updated', 'agent.deleted', 'workspace.created', 'workspace.updated'],
    );
    assert.equal(mine[0]?.tenant, a.json.tenant_id);
    assert.deepEqual(mine[1]?.data['changed'], ['name']);
    const ids = mine.map((e) => e.id);
    assert.deepEqual([...ids].sort(), ids, 'event ids increase in publish order');
  });

  it('REST ingest announces edge.observed once per accepted batch', async () => {
    const before = seen.filter((e) => e.type === 'edge.observed').length;
    const agent = await send('POST', '/v1/agents', { name: 'observer' });
    const obs = await send('POST', '/v1/m/accessmap/observations', {
      observations: [
        {
          origin: { kind: 'agent', id: agent.json.id },
          resource: { ref: 's3://bus-bucket', class: 'data' },
          mode: 'r',
          signal_source: 'test',
          confidence: 'high',
          observed_at: '2026-11-27T10:00:00.000000000Z',
        },
      ],
    });
    assert.equal(obs.status, 200, JSON.stringify(obs.json));
    await server.services.events.idle();
    const observed = seen.filter((e) => e.type === 'edge.observed');
    assert.equal(observed.length, before + 1);
    assert.equal(observed.at(-1)?.data['count'], 1);
  });
});
