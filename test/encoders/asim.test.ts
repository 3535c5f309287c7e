import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { asimEncoder } from '../../src/encoders/asim.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { DETERMINED_SEVERITIES } from '../../src/encoders/severity.js';
import { OPTS, event, hostileRecord, record } from './json-family.fixtures.js';

type Obj = Record<string, any>;

function encode(r = record()): Obj {
  const line = asimEncoder.encodeRecord(r, OPTS);
  assert.doesNotMatch(line, /[\r\n]/);
  return JSON.parse(line) as Obj;
}

/** ASIM Audit Event schema 0.1 enumerations. */
const EVENT_TYPES = new Set(['Set', 'Read', 'Create', 'Delete', 'Execute', 'Install', 'Clear', 'Enable', 'Disable', 'Other']);
const SEVERITIES = new Set(['Informational', 'Low', 'Medium', 'High']);
const RESULTS = new Set(['Success', 'Partial', 'Failure', 'NA']);
const OBJECT_TYPES = new Set(['Cloud Resource', 'Configuration Atom', 'Policy Rule', 'Other']);

describe('asim encoder (ASIM Audit Event 0.1)', () => {
  it('maps a ledger record (golden)', () => {
    const r = record();
    assert.deepEqual(encode(r), {
      TimeGenerated: r.occurred_at, EventStartTime: r.occurred_at, EventEndTime: r.occurred_at,
      EventCount: 1, EventType: 'Create', EventResult: 'NA', EventSeverity: 'Informational',
      EventOriginalSeverity: 'info', EventOriginalType: 'agent.create', EventOriginalUid: r.id, EventMessage: 'agent.create',
      EventProduct: 'control-plane', EventProductVersion: '0.1.0', EventVendor: 'svc',
      EventSchema: 'AuditEvent', EventSchemaVersion: '0.1', Operation: 'agent.create',
      Object: 'agent-7', ObjectType: 'Other',
      ActorUserId: 'user:6f1c2d3e', ActorUserIdType: 'Other', ActorUserType: 'Regular',
      AdditionalFields: {
        seq: 42, tenant: r.tenant, occurred_at: r.occurred_at, prev_hash: r.prev_hash, hash: r.hash, sig: r.sig,
        key_id: r.key_id, payload_hash: null, meta_commitment: r.meta_commitment,
        actor_kind: 'user', target_kind: 'agent', meta: r.meta,
      },
    });
  });

  it('keeps every enumerated field inside the schema enumerations', () => {
    for (const action of ['agent.create', 'agent.read', 'policy.update', 'setting.delete', 'tool.exec', 'x.y', 'agent.enable']) {
      const d = encode(record({ action }));
      assert.ok(EVENT_TYPES.has(d['EventType']), action);
      assert.ok(SEVERITIES.has(d['EventSeverity']), action);
      assert.ok(RESULTS.has(d['EventResult']), action);
      assert.ok(OBJECT_TYPES.has(d['ObjectType']), action);
    }
    assert.equal(encode(record({ action: 'tool.exec' }))['EventType'], 'Execute');
    assert.equal(encode(record({ action: 'policy.update' }))['ObjectType'], 'Policy Rule');
  });

  it('keeps the five severities distinguishable and never invents one', () => {
    const pairs = DETERMINED_SEVERITIES.map((severity) => {
      const d = JSON.parse(asimEncoder.encodeEvent!(event({ severity }), OPTS)) as Obj;
      return `${d['EventSeverity']}/${d['EventOriginalSeverity']}`;
    });
    assert.deepEqual(pairs, ['Informational/info', 'Low/low', 'Medium/medium', 'High/high', 'High/critical']);
    assert.equal(new Set(pairs).size, 5);
    const und = JSON.parse(asimEncoder.encodeEvent!(event({ severity: 'undetermined', time: undefined }), OPTS)) as Obj;
    assert.equal('EventSeverity' in und, false);
    assert.equal('TimeGenerated' in und, false);
  });

  it('keeps hostile values and every integrity field verbatim', () => {
    const h = hostileRecord();
    const d = encode(h);
    for (const f of INTEGRITY_FIELD_NAMES) assert.equal(d['AdditionalFields'][f], h[f], f);
    assert.equal(d['Object'], Buffer.from(h.target_id, 'utf8').toString('utf8'));
  });
});
