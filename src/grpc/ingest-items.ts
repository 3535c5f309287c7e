/**
 * Validation of one pushed batch, item by item (ingest.proto "Per-item rejection"): each item
 * either becomes a normalised record or a rejection with its index and reason; one bad item never
 * fails the others. Pure: existence checks against the store happen in ingest-commit.ts.
 */
import {
  ATTRIBUTIONS,
  CONFIDENCES,
  MODES,
  ORIGIN_KINDS,
  type Attribution,
  type Confidence,
  type Mode,
  type OriginKind,
} from '../modules/accessmap/model.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** DECISIONS.md timestamps: RFC 3339 UTC with exactly 9 fractional digits. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/;
export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
const MAX_REF = 512;

/** A pushed edge observation as the proto-loader hands it over (defaults filled in). */
export interface EdgeMessage {
  origin_kind: string;
  origin_id: string;
  origin_ref: string;
  resource_id: string;
  resource_ref: string;
  mode: string;
  confidence: string;
  signal_source: string;
  observed_at: string;
  attribution: string;
  count: number;
}

export interface FindingMessage {
  rule: string;
  severity: string;
  subject: string;
  message: string;
  observed_at: string;
}

export interface CostMessage {
  agent: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  currency: string;
  observed_at: string;
}

export interface BatchMessage {
  batch_id: string;
  collector: string;
  edges: EdgeMessage[];
  findings: FindingMessage[];
  costs: CostMessage[];
}

/** A node named by id or by natural key, never both. */
export type NodeRef = { id: string; ref?: undefined } | { ref: string; id?: undefined };

/** A valid edge observation (the accessmap `Observation` plus its batch index). */
export interface ValidEdge {
  index: number;
  origin: NodeRef & { kind: OriginKind };
  resource: NodeRef;
  mode: Mode;
  confidence: Confidence;
  attribution: Attribution;
  signal_source: string;
  observed_at: string;
  count: number;
}

export interface ValidFinding {
  index: number;
  rule: string;
  severity: (typeof SEVERITIES)[number];
  subject: string;
  message: string;
  observed_at: string;
}

export interface ValidCost {
  index: number;
  agent: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  currency: string;
  observed_at: string;
}

export interface Rejection {
  kind: 'edge' | 'finding' | 'cost';
  index: number;
  reason: string;
}

export interface ValidatedBatch {
  edges: ValidEdge[];
  findings: ValidFinding[];
  costs: ValidCost[];
  rejected: Rejection[];
}

class ItemError extends Error {}

function oneOf<T extends string>(value: string, allowed: readonly T[], field: string, fallback?: T): T {
  if (value === '' && fallback !== undefined) return fallback;
  if (value === '') throw new ItemError(`${field} is required (one of ${allowed.join(', ')})`);
  if (!(allowed as readonly string[]).includes(value))
    throw new ItemError(`unknown ${field} ${JSON.stringify(value.slice(0, 64))} (one of ${allowed.join(', ')})`);
  return value as T;
}

function text(value: string, field: string, min: number, max: number): string {
  if (value.length < min) throw new ItemError(`${field} is required`);
  if (value.length > max) throw new ItemError(`${field} is longer than ${max} characters`);
  return value;
}

function time(value: string, now: string, field = 'observed_at'): string {
  if (value === '') return now;
  if (!TIMESTAMP.test(value) || Number.isNaN(Date.parse(value)))
    throw new ItemError(`${field} must be RFC 3339 UTC with 9 fractional digits`);
  return value;
}

function node(id: string, ref: string, what: string): NodeRef {
  if (id !== '' && ref !== '') throw new ItemError(`give ${what}_id or ${what}_ref, not both`);
  if (id !== '') {
    const lower = id.toLowerCase();
    if (!UUID.test(lower)) throw new ItemError(`${what}_id must be a UUID`);
    return { id: lower };
  }
  if (ref === '') throw new ItemError(`${what}_id or ${what}_ref is required`);
  return { ref: text(ref, `${what}_ref`, 1, MAX_REF) };
}

function count(n: number, field: string): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new ItemError(`${field} must be a non-negative integer`);
  return n;
}

/** Validate every item of a batch; `now` fills absent observation times. */
export function validateBatch(batch: BatchMessage, now: string): ValidatedBatch {
  const out: ValidatedBatch = { edges: [], findings: [], costs: [], rejected: [] };
  batch.edges.forEach((e, index) => {
    try {
      const kind = oneOf(e.origin_kind, ORIGIN_KINDS, 'origin_kind');
      const n = e.count === 0 ? 1 : e.count;
      if (n > 1_000_000) throw new ItemError('count is above 1000000');
      out.edges.push({
        index,
        origin: { ...node(e.origin_id, e.origin_ref, 'origin'), kind },
        resource: node(e.resource_id, e.resource_ref, 'resource'),
        mode: oneOf(e.mode, MODES, 'mode'),
        confidence: oneOf(e.confidence, CONFIDENCES, 'confidence'),
        attribution: oneOf(e.attribution, ATTRIBUTIONS, 'attribution', 'direct'),
        signal_source: text(e.signal_source, 'signal_source', 1, 128),
        observed_at: time(e.observed_at, now),
        count: n,
      });
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      out.rejected.push({ kind: 'edge', index, reason: err.message });
    }
  });
  batch.findings.forEach((f, index) => {
    try {
      out.findings.push({
        index,
        rule: text(f.rule, 'rule', 1, 128),
        severity: oneOf(f.severity, SEVERITIES, 'severity'),
        subject: text(f.subject, 'subject', 0, 512),
        message: text(f.message, 'message', 0, 4096),
        observed_at: time(f.observed_at, now),
      });
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      out.rejected.push({ kind: 'finding', index, reason: err.message });
    }
  });
  batch.costs.forEach((c, index) => {
    try {
      if (!/^[A-Z]{3}$/.test(c.currency)) throw new ItemError('currency must be an ISO 4217 code such as USD');
      out.costs.push({
        index,
        agent: text(c.agent, 'agent', 1, 256),
        model: text(c.model, 'model', 1, 128),
        input_tokens: count(c.input_tokens, 'input_tokens'),
        output_tokens: count(c.output_tokens, 'output_tokens'),
        cost_micros: count(c.cost_micros, 'cost_micros'),
        currency: c.currency,
        observed_at: time(c.observed_at, now),
      });
    } catch (err) {
      if (!(err instanceof ItemError)) throw err;
      out.rejected.push({ kind: 'cost', index, reason: err.message });
    }
  });
  return out;
}
