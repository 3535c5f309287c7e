import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ecsEncoder } from '../../src/encoders/ecs.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { DETERMINED_SEVERITIES } from '../../src/encoders/severity.js';
import { HOSTILE_ALL, OPTS, event, hostileRecord, record } from './json-family.fixtures.js';

type Obj = Record<string, any>;

/** ECS 9.4.0 field reference: the standard fields we may set (everything else must be under `svc.`). */
const ECS_FIELDS = new Set([
  '@timestamp', 'ecs.version', 'message', 'event.kind', 'event.category', 'event.type', 'event.action', 'event.id',
  'event.severity', 'event.dataset', 'event.module', 'event.provider', 'event.sequence', 'event.hash',
  'observer.vendor', 'observer.product', 'observer.version', 'user.id', 'organization.id', 'trace.id', 'span.id',
]);
/** ECS 9 categorisation allowed values (event.kind / event.category / event.type). */
const KINDS = new Set(['alert', 'asset', 'enrichment', 'event', 'metric', 'state', 'pipeline_error', 'signal']);
const CATEGORIES = new Set(['api', 'authentication', 'configuration', 'database', 'driver', 'email', 'file', 'host', 'iam',
  'intrusion_detection', 'library', 'malware', 'network', 'package', 'process', 'registry', 'session', 'threat', 'vulnerability', 'web']);
const TYPES = new Set(['access', 'admin', 'allowed', 'change', 'connection', 'creation', 'deletion', 'denied', 'device', 'end',
  'error', 'group', 'indicator', 'info', 'installation', 'protocol', 'start', 'user']);

function leafPaths(v: unknown, at = ''): string[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [at];
  return Object.entries(v).flatMap(([k, x]) => leafPaths(x, at === '' ? k : `${at}.${k}`));
}

function encode(r = record()): Obj {
  const line = ecsEncoder.encodeRecord(r, OPTS);
  assert.doesNotMatch(line, /[\r\n]/);
  return JSON.parse(line) as Obj;
}

function assertEcsShape(doc: Obj): void {
  for (const p of leafPaths(doc)) {
    if (p === 'svc' || p.startsWith('svc.')) continue;
    assert.ok(ECS_FIELDS.has(p), `non-ECS field outside svc.*: ${p}`);
  }
  assert.ok(KINDS.has(doc['event']['kind']));
  for (const c of doc['event']['category']) assert.ok(CATEGORIES.has(c), c);
  for (const t of doc['event']['type']) assert.ok(TYPES.has(t), t);
}

describe('ecs encoder (ECS 9.4.0)', () => {
  it('maps a ledger record (golden)', () => {
    const r = record();
    assert.deepEqual(encode(r), {
      '@timestamp': '2025-03-14T15:09:26.535897932Z',
      ecs: { version: '9.4.0' },
      message: 'agent.create',
      event: {
        kind: 'event', category: ['configuration'], type: ['creation'], action: 'agent.create', id: r.id,
        severity: 1, dataset: 'svc.audit', module: 'svc', provider: 'control-plane', sequence: 42, hash: r.hash,
      },
      observer: { vendor: 'svc', product: 'control-plane', version: '0.1.0' },
      user: { id: 'user:6f1c2d3e' },
      organization: { id: r.tenant },
      svc: {
        severity: 'info',
        audit: {
          seq: 42, tenant: r.tenant, occurred_at: r.occurred_at, prev_hash: r.prev_hash, hash: r.hash, sig: r.sig,
          key_id: r.key_id, payload_hash: null, meta_commitment: r.meta_commitment, id: r.id, actor: r.actor,
          actor_kind: 'user', action: 'agent.create', target_kind: 'agent', target_id: 'agent-7', meta: r.meta,
        },
      },
    });
  });

  it('uses only ECS fields and allowed categorisation values, for every kind of action', () => {
    for (const action of [
      'agent.create',
      'token.delete',
      'user.update',
      'tool.exec',
      'process.kill',
      'datastore.query',
      'audit.export',
      'x.y',
    ]) {
      assertEcsShape(encode(record({ action })));
    }
    assert.deepEqual(encode(record({ action: 'tool.exec' }))['event']['category'], ['process']);
    assert.deepEqual(encode(record({ action: 'token.delete' }))['event'], {
      ...encode(record({ action: 'token.delete' }))['event'],
      category: ['iam'],
      type: ['deletion'],
    });
  });

  it('keeps hostile values verbatim and trace context in ECS tracing fields', () => {
    const h = hostileRecord();
    const doc = encode(h);
    assertEcsShape(doc);
    assert.equal(doc['svc']['audit']['target_id'], Buffer.from(h.target_id, 'utf8').toString('utf8'));
    assert.deepEqual(doc['trace'], { id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    assert.deepEqual(doc['span'], { id: '00f067aa0ba902b7' });
    for (const f of INTEGRITY_FIELD_NAMES) assert.ok(f in doc['svc']['audit'], f);
  });

  it('maps severities per the table and never invents @timestamp', () => {
    const sev = DETERMINED_SEVERITIES.map(
      (severity) => (JSON.parse(ecsEncoder.encodeEvent!(event({ severity }), OPTS)) as Obj)['event']['severity'],
    );
    assert.deepEqual(sev, [1, 3, 5, 7, 10]);
    const und = JSON.parse(
      ecsEncoder.encodeEvent!(event({ severity: 'undetermined', time: undefined, fields: { x: HOSTILE_ALL } }), OPTS),
    ) as Obj;
    assert.equal(und['event']['severity'], 0);
    assert.equal('@timestamp' in und, false);
    assertEcsShape(und);
    assert.equal(und['svc']['event']['type'], 'finding.created');
  });
});
