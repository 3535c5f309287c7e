import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonEncoder, jsonProjectionEncoder, JsonEncodeError } from '../../src/encoders/json.js';
import { toJsonLine } from '../../src/encoders/json-line.js';
import { HOSTILE, HOSTILE_ALL, OPTS, event, hostileRecord, record } from './json-family.fixtures.js';

type Obj = Record<string, any>;

describe('NDJSON framing (json-line)', () => {
  it('escapes every line terminator and control, and only those', () => {
    const line = toJsonLine({ v: `a\r\nb\u2028c\u2029d\u0085e\u007ff\u0000g` });
    assert.equal(line, '{"v":"a\\r\\nb\\u2028c\\u2029d\\u0085e\\u007ff\\u0000g"}');
    assert.deepEqual(JSON.parse(line), { v: `a\r\nb\u2028c\u2029d\u0085e\u007ff\u0000g` });
  });

  it('writes lone surrogates as U+FFFD (as UTF-8 storage does) and leaves escaped text alone', () => {
    assert.equal(toJsonLine({ [HOSTILE.loneHigh]: HOSTILE.loneLow }), '{"bad\\ufffdx":"bad\\ufffdx"}');
    // the text backslash-u-d-8-0-0 is not a surrogate and must survive
    assert.deepEqual(JSON.parse(toJsonLine({ v: HOSTILE.escapedSurrogateText })), { v: HOSTILE.escapedSurrogateText });
    assert.deepEqual(JSON.parse(toJsonLine({ v: '\\\ud800' })), { v: '\\\ufffd' });
    // a valid pair is kept as the character itself
    assert.equal(toJsonLine('🚀'), '"🚀"');
  });
});

describe('json (eventing sink): the raw captured envelope', () => {
  it('posts the envelope without transform', () => {
    const raw = { specversion: '1.0', type: 'agent.step', z: 1, a: [true, null, { k: 'v' }], note: 'x"y\\z' };
    const line = jsonEncoder.encodeEvent!(event({ raw }), OPTS);
    assert.equal(line, JSON.stringify(raw)); // same bytes, same key order
  });

  it('keeps hostile envelope content on one line', () => {
    const raw = { data: HOSTILE_ALL, [HOSTILE.long]: HOSTILE.crlf };
    const line = jsonEncoder.encodeEvent!(event({ raw }), OPTS);
    assert.doesNotMatch(line, /[\r\n\u2028\u2029]/);
    const back = JSON.parse(line) as Obj;
    assert.equal(back['data'], Buffer.from(HOSTILE_ALL, 'utf8').toString('utf8'));
    assert.equal(back[HOSTILE.long], HOSTILE.crlf);
  });

  it('refuses instead of falling back when there is no envelope, and has no ledger form', () => {
    assert.throws(() => jsonEncoder.encodeEvent!(event({ raw: undefined }), OPTS), JsonEncodeError);
    assert.throws(() => jsonEncoder.encodeEvent!(event({ raw: [1, 2] }), OPTS), JsonEncodeError);
    assert.throws(() => jsonEncoder.encodeEvent!(event({ raw: 'text' }), OPTS), JsonEncodeError);
    assert.throws(() => jsonEncoder.encodeRecord(record(), OPTS), /no raw JSON passthrough/);
  });
});

describe('json (notification connectors): minimal projection', () => {
  it('projects an event to its displayable fields, never the raw envelope (golden)', () => {
    const line = jsonProjectionEncoder.encodeEvent!(event(), OPTS);
    assert.equal(
      line,
      '{"id":"evt-1","type":"finding.created","time":"2025-03-14T15:09:26.535Z","severity":"high",' +
        '"tenant":"3b241101-e2bb-4255-8caf-4136c566a962","title":"Secret committed to repository",' +
        '"fields":{"repo":"acme/api","count":3,"ratio":0.5,"ok":false,"missing":null}}',
    );
    const noTime = JSON.parse(jsonProjectionEncoder.encodeEvent!(event({ time: undefined, tenant: undefined }), OPTS)) as Obj;
    assert.equal('time' in noTime, false);
    assert.equal('tenant' in noTime, false);
  });

  it('projects a ledger record with its integrity fields verbatim (golden)', () => {
    const r = record({ payload_hash: '9f'.repeat(32) });
    assert.deepEqual(JSON.parse(jsonProjectionEncoder.encodeRecord(r, OPTS)), {
      id: r.id, type: 'agent.create', time: r.occurred_at, severity: 'info', title: 'agent.create',
      fields: { actor: 'user:6f1c2d3e', actor_kind: 'user', target_kind: 'agent', target_id: 'agent-7' },
      seq: 42, tenant: r.tenant, occurred_at: r.occurred_at, prev_hash: r.prev_hash, hash: r.hash, sig: r.sig,
      key_id: r.key_id, payload_hash: '9f'.repeat(32), meta_commitment: r.meta_commitment,
    });
    const h = hostileRecord();
    const back = JSON.parse(jsonProjectionEncoder.encodeRecord(h, OPTS)) as Obj;
    assert.equal(back['fields']['target_id'], Buffer.from(h.target_id, 'utf8').toString('utf8'));
    assert.equal(back['key_id'], HOSTILE.astral);
  });
});
