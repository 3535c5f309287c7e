/**
 * The ingest payload hash writes edges' canonical JSON directly (src/grpc/ingest-hash.ts); it must
 * be byte for byte what the generic RFC 8785 path (`canonicalMeta`) gives for the same batch, since
 * the hash is signed into the ledger.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { canonicalMeta } from '../../src/ledger/canonical-json.js';
import { canonicalEdge, payloadHash } from '../../src/grpc/ingest-hash.js';
import { validateBatch, type BatchMessage, type EdgeMessage } from '../../src/grpc/ingest-items.js';

const NOW = '2026-11-22T09:00:00.123456789Z';

function edge(over: Partial<EdgeMessage>): EdgeMessage {
  return {
    origin_kind: 'identity',
    origin_id: '',
    origin_ref: 'sa',
    resource_id: '',
    resource_ref: 'r',
    mode: 'r',
    confidence: 'high',
    signal_source: 's',
    observed_at: '',
    attribution: '',
    count: 0,
    ...over,
  };
}

/** The definition: canonicalMeta of the whole object, indexes dropped. */
function generic(batch: BatchMessage): string {
  const v = validateBatch(batch, NOW);
  const drop = <T extends { index: number }>({ index: _i, ...rest }: T) => rest;
  return createHash('sha256')
    .update(canonicalMeta({ batch_id: batch.batch_id, edges: v.edges.map(drop), findings: v.findings.map(drop), costs: v.costs.map(drop) }))
    .digest('hex');
}

function direct(batch: BatchMessage): string {
  const v = validateBatch(batch, NOW);
  return payloadHash(batch.batch_id, v.edges, v.findings, v.costs);
}

const awkward = [
  '',
  'plain',
  'quote " and \\ backslash',
  'ctl \u0000\u0001\u001f\u007f',
  'tab\tnl\n',
  'é ü ß 日本 \u2028\u2029',
  'emoji 🦀 pair',
  '</script>',
  'x'.repeat(512),
];

describe('ingest payload hash', () => {
  test('edges of every shape: same bytes as the generic canonical JSON', () => {
    const edges: EdgeMessage[] = [];
    for (const s of awkward.filter((a) => a !== '')) {
      edges.push(edge({ origin_ref: s, resource_ref: s, signal_source: s.slice(0, 128) }));
      edges.push(
        edge({
          origin_kind: 'agent',
          origin_ref: s,
          resource_ref: '',
          resource_id: randomUUID().toUpperCase(),
          mode: 'rw',
          confidence: 'low',
          attribution: 'shared_identity',
          count: 1_000_000,
        }),
      );
      edges.push(
        edge({
          origin_kind: 'session',
          origin_ref: '',
          origin_id: randomUUID(),
          resource_ref: s,
          confidence: 'medium',
          attribution: 'inferred',
          observed_at: '2026-01-02T03:04:05.000000001Z',
          count: 7,
        }),
      );
    }
    const batch: BatchMessage = { batch_id: randomUUID(), collector: 'c', edges, findings: [], costs: [] };
    assert.equal(validateBatch(batch, NOW).edges.length, edges.length);
    assert.equal(direct(batch), generic(batch));
    const v = validateBatch(batch, NOW);
    for (const e of v.edges) {
      const { index: _i, ...rest } = e;
      assert.equal(canonicalEdge(e), canonicalMeta(rest));
    }
  });

  test('with findings and cost samples, and with nothing accepted', () => {
    const batch: BatchMessage = {
      batch_id: randomUUID(),
      collector: 'c',
      edges: [edge({}), edge({ mode: 'bogus' })],
      findings: awkward.map((s, i) => ({ rule: `rule-${i}`, severity: 'high', subject: s, message: s, observed_at: '' })),
      costs: [{ agent: 'a', model: 'm', input_tokens: 1, output_tokens: 2, cost_micros: 3, currency: 'USD', observed_at: '' }],
    };
    assert.equal(direct(batch), generic(batch));
    const empty: BatchMessage = { batch_id: randomUUID(), collector: 'c', edges: [edge({ mode: '' })], findings: [], costs: [] };
    assert.equal(direct(empty), generic(empty));
  });
});
