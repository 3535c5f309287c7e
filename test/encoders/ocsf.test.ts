import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ocsfEncoder } from '../../src/encoders/ocsf.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { DETERMINED_SEVERITIES } from '../../src/encoders/severity.js';
import { HOSTILE, HOSTILE_ALL, OPTS, event, hostileRecord, record } from './json-family.fixtures.js';
import { OcsfSchema } from './ocsf-resolver.js';

type Obj = Record<string, any>;
const schema = new OcsfSchema();

function encode(r = record()): Obj {
  const line = ocsfEncoder.encodeRecord(r, OPTS);
  assert.doesNotMatch(line, /[\r\n]/);
  return JSON.parse(line) as Obj;
}

function assertValid(ev: Obj, label: string): void {
  assert.deepEqual(schema.validate(ev), [], `${label}: ${JSON.stringify(ev).slice(0, 300)}`);
}

/** action (+ target kind) → [class_uid, activity_id], from the mapping documented in docs/formats-json.md. */
const MAPPING: ReadonlyArray<[string, string, number, number]> = [
  ['agent.create', 'agent', 6003, 1],
  ['audit.read', '', 6003, 2],
  ['audit.export', '', 6003, 2],
  ['workspace.update', 'workspace', 6003, 3],
  ['token.delete', 'token', 6003, 4],
  ['user.login', 'user', 6003, 99],
  ['tool.exec', 'tool', 1007, 1],
  ['agent.spawn', 'agent', 1007, 1],
  ['process.kill', 'process', 1007, 2],
  ['agent.stop', 'process', 1007, 2],
  ['datastore.query', 'datastore', 6005, 4],
  ['vector_store.write', 'vector_store', 6005, 5],
  ['knowledge_base.read', 'knowledge_base', 6005, 1],
  ['bucket.create', 'bucket', 6005, 6],
  ['table.drop', 'table', 6005, 7],
  ['memory.list', 'dataset', 6005, 8],
  ['database.vacuum', 'database', 6005, 99],
];

describe('ocsf encoder (OCSF 1.8.0, validated against the official definitions)', () => {
  it('the resolver rejects what OCSF forbids (guards every check below)', () => {
    const good = encode();
    assertValid(good, 'baseline');
    const broken: Array<[string, (e: Obj) => void]> = [
      ['unknown top-level key', (e) => { e['bogus'] = 1; }],
      ['missing actor', (e) => { delete e['actor']; }],
      ['missing api.operation', (e) => { delete e['api']['operation']; }],
      ['bad activity_id', (e) => { e['activity_id'] = 5; e['type_uid'] = 600305; }],
      ['type_uid mismatch', (e) => { e['type_uid'] = 600302; }],
      ['bad severity_id', (e) => { e['severity_id'] = 7; }],
      ['string time', (e) => { e['time'] = '2025-01-01'; }],
      ['unknown metadata key', (e) => { e['metadata']['wire_enc'] = 'x'; }],
      ['profile attribute not applied', (e) => { e['trace'] = { uid: 'x' }; }],
      ['actor without any identity', (e) => { e['actor'] = {}; }],
      ['wrong class_uid/category', (e) => { e['category_uid'] = 1; }],
      ['unsupported profile', (e) => { e['metadata']['profiles'] = ['ai_operation', 'incident']; }],
    ];
    for (const [label, mutate] of broken) {
      const copy = structuredClone(good);
      mutate(copy);
      assert.notDeepEqual(schema.validate(copy), [], label);
    }
  });

  it('maps actions to class and activity, with type_uid = class_uid*100 + activity_id', () => {
    for (const [action, target_kind, cls, act] of MAPPING) {
      const ev = encode(record({ action, target_kind, meta: '{"command":"ls -la","pid":4242,"hostname":"runner-1"}' }));
      assert.equal(ev['class_uid'], cls, action);
      assert.equal(ev['activity_id'], act, action);
      assert.equal(ev['type_uid'], cls * 100 + act, action);
      assert.equal(ev['category_uid'], cls === 1007 ? 1 : 6, action);
      assertValid(ev, action);
    }
  });

  it('validates every class with hostile values in every free-text field', () => {
    for (const [action, target_kind] of [
      ['agent.create', 'agent'],
      ['tool.exec', 'tool'],
      ['datastore.read', 'datastore'],
      [`x.${HOSTILE_ALL}`, HOSTILE_ALL],
    ] as const) {
      const ev = encode(hostileRecord({ action, target_kind, actor_kind: HOSTILE.quote }));
      assertValid(ev, action.slice(0, 40));
    }
  });

  it('carries metadata, ai_operation profile, ai_model, and integrity fields verbatim under unmapped', () => {
    const r = record({
      payload_hash: '77'.repeat(32),
      meta: '{"model":"gpt-4o","model_provider":"openai","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","session_id":"s-1"}',
    });
    const ev = encode(r);
    assertValid(ev, 'ai_model');
    assert.deepEqual(ev['metadata']['profiles'], ['ai_operation']);
    assert.equal(ev['metadata']['version'], '1.8.0');
    assert.deepEqual(ev['metadata']['product'], { vendor_name: 'svc', name: 'control-plane', version: '0.1.0' });
    assert.deepEqual(ev['ai_model'], { name: 'gpt-4o', ai_provider: 'openai' });
    assert.equal(ev['time'], Date.parse('2025-03-14T15:09:26.535Z'));
    for (const f of INTEGRITY_FIELD_NAMES) assert.equal(ev['unmapped'][f], r[f], f);
    assert.deepEqual(ev['unmapped']['trace'], { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', session_id: 's-1' });
    assert.equal(ev['unmapped']['meta'], r.meta);
  });

  it('maps the five determined severities to distinct severity_id, undetermined to 0 Unknown', () => {
    const ids = DETERMINED_SEVERITIES.map((severity) => {
      const ev = JSON.parse(ocsfEncoder.encodeEvent!(event({ severity }), OPTS)) as Obj;
      assertValid(ev, severity);
      return ev['severity_id'] as number;
    });
    assert.deepEqual(ids, [1, 2, 3, 4, 5]);
    const und = JSON.parse(ocsfEncoder.encodeEvent!(event({ severity: 'undetermined' }), OPTS)) as Obj;
    assert.equal(und['severity_id'], 0);
    assertValid(und, 'undetermined');
  });

  it('encodes events, including one with no time and no actor, as valid OCSF', () => {
    const ev = JSON.parse(ocsfEncoder.encodeEvent!(event({ time: undefined, fields: { note: HOSTILE_ALL } }), OPTS)) as Obj;
    assertValid(ev, 'event');
    assert.equal(ev['time'], 0);
    assert.equal(ev['metadata']['original_time'], undefined);
    assert.deepEqual(ev['actor'], { app_name: 'control-plane' });
  });

  it('property: arbitrary records stay valid OCSF on one line', () => {
    const s = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(
        fc.constantFrom('create', 'read', 'exec', 'query', 'kill', 'x'),
        fc.constantFrom('agent', 'process', 'table', 'bucket', 'vector_store', ''),
        s,
        s,
        s,
        (verb, noun, actor, kind, target) => {
          const line = ocsfEncoder.encodeRecord(
            record({ action: `${noun}.${verb}`, target_kind: noun, actor, actor_kind: kind, target_id: target, meta: target }),
            OPTS,
          );
          assert.doesNotMatch(line, /[\r\n]/);
          assertValid(JSON.parse(line) as Obj, `${noun}.${verb}`);
        },
      ),
      { numRuns: 200 },
    );
  });
});
