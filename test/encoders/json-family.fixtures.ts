/** Shared inputs for the JSON-family encoder tests: realistic ledger records and hostile values. */
import type { EgressEvent, EncodeOptions } from '../../src/encoders/encoder.js';
import type { AuditRecord } from '../../src/ledger/record.js';

/** Encode options with the ledger device identity. */
export const OPTS: EncodeOptions = { device: { vendor: 'svc', product: 'control-plane', version: '0.1.0' } };

/** Hostile string fragments every format must survive. */
export const HOSTILE = {
  cr: 'a\rb',
  lf: 'a\nb',
  crlf: 'x\r\ny',
  tab: 'a\tb',
  nul: 'a\u0000b',
  pct: '100%25 %0A',
  backslash: 'C:\\path\\u0041\\',
  quote: 'say "hi"',
  pipeEq: 'a|b=c]d',
  astral: 'rocket 🚀 clef 𝄞',
  loneHigh: 'bad\uD800x',
  loneLow: 'bad\uDC00x',
  escapedSurrogateText: '\\ud800 not a surrogate',
  lineSeparators: 'ls\u2028ps\u2029nel\u0085del\u007f',
  long: 'n'.repeat(2048),
  longAstral: '🚀'.repeat(1024),
} as const;

/** All hostile fragments joined, for one worst-case value. */
export const HOSTILE_ALL = Object.values(HOSTILE).join('|');

/** A well-formed ledger record; override any field. */
export function record(over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: '0190f5c2-7d1e-7a3b-9c4d-5e6f7a8b9c0d',
    tenant: '3b241101-e2bb-4255-8caf-4136c566a962',
    seq: 42,
    occurred_at: '2025-03-14T15:09:26.535897932Z',
    actor: 'user:6f1c2d3e',
    actor_kind: 'user',
    action: 'agent.create',
    target_kind: 'agent',
    target_id: 'agent-7',
    meta: '{"name":"triage-bot"}',
    meta_blind: 'ab'.repeat(32),
    meta_commitment: 'cd'.repeat(32),
    payload_hash: null,
    prev_hash: '01'.repeat(32),
    hash: 'ef'.repeat(32),
    sig: 'c2lnbmF0dXJlLWJ5dGVzLWhlcmU=',
    key_id: 'k-2025-01',
    ...over,
  };
}

/** A record whose every free-text field is hostile. */
export function hostileRecord(over: Partial<AuditRecord> = {}): AuditRecord {
  return record({
    actor: `user:${HOSTILE_ALL}`,
    actor_kind: HOSTILE.quote,
    action: `agent.${HOSTILE.long}`,
    target_kind: HOSTILE.pipeEq,
    target_id: HOSTILE_ALL,
    meta: JSON.stringify({ note: HOSTILE_ALL, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' }),
    key_id: HOSTILE.astral,
    ...over,
  });
}

/** A notification-style egress event; override any field. */
export function event(over: Partial<EgressEvent> = {}): EgressEvent {
  return {
    id: 'evt-1',
    type: 'finding.created',
    time: '2025-03-14T15:09:26.535Z',
    severity: 'high',
    tenant: '3b241101-e2bb-4255-8caf-4136c566a962',
    title: 'Secret committed to repository',
    fields: { repo: 'acme/api', count: 3, ratio: 0.5, ok: false, missing: null },
    raw: { specversion: '1.0', id: 'evt-1', data: { a: [1, 2, { b: 'c' }] } },
    ...over,
  };
}
