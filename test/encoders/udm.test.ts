import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { udmEncoder } from '../../src/encoders/udm.js';
import { INTEGRITY_FIELD_NAMES } from '../../src/encoders/ledger-fields.js';
import { DETERMINED_SEVERITIES } from '../../src/encoders/severity.js';
import { OPTS, event, hostileRecord, record } from './json-family.fixtures.js';

type Obj = Record<string, any>;

function encode(r = record()): Obj {
  const line = udmEncoder.encodeRecord(r, OPTS);
  assert.doesNotMatch(line, /[\r\n]/);
  return JSON.parse(line) as Obj;
}

describe('udm encoder (Chronicle UDM)', () => {
  it('maps a ledger record (golden)', () => {
    const r = record();
    assert.deepEqual(encode(r), {
      metadata: {
        event_timestamp: '2025-03-14T15:09:26.535897932Z',
        event_type: 'USER_RESOURCE_CREATION',
        vendor_name: 'svc', product_name: 'control-plane', product_version: '0.1.0',
        product_event_type: 'agent.create', product_log_id: r.id, description: 'agent.create',
      },
      principal: { user: { userid: 'user:6f1c2d3e' } },
      target: { resource: { name: 'agent-7', resource_subtype: 'agent' } },
      security_result: [{ severity: 'INFORMATIONAL' }],
      additional: {
        'svc.audit.seq': 42, 'svc.audit.tenant': r.tenant, 'svc.audit.occurred_at': r.occurred_at,
        'svc.audit.prev_hash': r.prev_hash, 'svc.audit.hash': r.hash, 'svc.audit.sig': r.sig, 'svc.audit.key_id': r.key_id,
        'svc.audit.payload_hash': null, 'svc.audit.meta_commitment': r.meta_commitment,
        'svc.audit.actor_kind': 'user', 'svc.audit.meta': r.meta,
      },
    });
  });

  it('chooses USER_RESOURCE_* only with a principal and a target, else GENERIC_EVENT', () => {
    assert.equal(encode(record({ action: 'agent.delete' }))['metadata']['event_type'], 'USER_RESOURCE_DELETION');
    assert.equal(encode(record({ action: 'agent.update' }))['metadata']['event_type'], 'USER_RESOURCE_UPDATE_CONTENT');
    assert.equal(encode(record({ action: 'audit.export' }))['metadata']['event_type'], 'USER_RESOURCE_ACCESS');
    const noTarget = encode(record({ action: 'audit.export', target_id: '' }));
    assert.equal(noTarget['metadata']['event_type'], 'GENERIC_EVENT');
    assert.equal('target' in noTarget, false);
    assert.equal(encode(record({ action: 'tool.exec' }))['metadata']['event_type'], 'GENERIC_EVENT');
  });

  it('maps severities per the table and omits security_result when undetermined', () => {
    const sev = DETERMINED_SEVERITIES.map(
      (severity) => (JSON.parse(udmEncoder.encodeEvent!(event({ severity }), OPTS)) as Obj)['security_result'][0]['severity'],
    );
    assert.deepEqual(sev, ['INFORMATIONAL', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL']);
    const und = JSON.parse(udmEncoder.encodeEvent!(event({ severity: 'undetermined', time: undefined }), OPTS)) as Obj;
    assert.equal('security_result' in und, false);
    assert.equal('event_timestamp' in und['metadata'], false);
    assert.equal('principal' in und, false);
    assert.equal(und['additional']['svc.event.fields.repo'], 'acme/api');
  });

  it('keeps hostile values and every integrity field verbatim', () => {
    const h = hostileRecord();
    const doc = encode(h);
    for (const f of INTEGRITY_FIELD_NAMES) assert.equal(doc['additional'][`svc.audit.${f}`], h[f], f);
    assert.equal(doc['target']['resource']['name'], Buffer.from(h.target_id, 'utf8').toString('utf8'));
    assert.equal(doc['additional']['svc.trace.trace_id'], '4bf92f3577b34da6a3ce929d0e0e4736');
  });
});
