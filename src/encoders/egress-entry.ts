/**
 * One neutral view of what the JSON-family encoders emit, built from a ledger record or from an
 * egress event. Field mapping per format reads this view; framing lives in `json-line.ts`
 * (STYLE.md rule 9: mapping kept apart from framing).
 */
import type { EgressEvent, Severity } from './encoder.js';
import { integrityFields, ledgerSeverity, type IntegrityFields } from './ledger-fields.js';
import type { AuditRecord } from '../ledger/record.js';

/** A displayable scalar (EgressEvent field values). */
export type Scalar = string | number | boolean | null;

/**
 * The agentic trace extension: where an agent step sits in its trace. Taken from the record's
 * `meta` (or an event's fields) under the keys below; ids are kept only when they are well-formed
 * W3C Trace Context ids (lowercase hex, not all zeros), so a bad value never reaches OTLP bytes.
 */
export interface AgentTrace {
  trace_id?: string;
  span_id?: string;
  parent_span_id?: string;
  session_id?: string;
  agent_id?: string;
  step?: number;
}

/** An AI model named by the record (OCSF `ai_operation` profile → `ai_model`). */
export interface AiModel {
  name: string;
  provider: string;
  version?: string;
}

/** The neutral view. `integrity` is set exactly for ledger records. */
export interface EgressEntry {
  source: 'ledger' | 'event';
  id: string;
  /** the dotted action (`agent.create`) or the event type */
  name: string;
  /** RFC 3339 text as recorded; undefined when there is no recorded time (never fabricated) */
  time: string | undefined;
  severity: Severity;
  tenant: string | undefined;
  actor: string | undefined;
  actorKind: string | undefined;
  targetKind: string | undefined;
  targetId: string | undefined;
  title: string;
  /** ledger only: canonical meta text (null once erased) */
  meta: string | null | undefined;
  integrity: IntegrityFields | undefined;
  /** event only: the flat displayable fields */
  fields: Readonly<Record<string, Scalar>>;
  trace: AgentTrace | undefined;
  aiModel: AiModel | undefined;
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

function hexId(value: unknown, re: RegExp): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.toLowerCase();
  // W3C Trace Context §3.2.2.3: all-zero ids are invalid
  return re.test(v) && /[1-9a-f]/.test(v) ? v : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Read the agentic trace extension from a flat bag (`meta` object, event fields, or `meta.trace`). */
export function agentTraceFrom(bag: Readonly<Record<string, unknown>>): AgentTrace | undefined {
  const nested = bag['trace'];
  const src: Readonly<Record<string, unknown>> =
    nested !== null && typeof nested === 'object' && !Array.isArray(nested) ? (nested as Record<string, unknown>) : bag;
  const t: AgentTrace = {};
  const traceId = hexId(src['trace_id'], HEX32);
  const spanId = hexId(src['span_id'], HEX16);
  const parent = hexId(src['parent_span_id'], HEX16);
  if (traceId !== undefined) t.trace_id = traceId;
  if (spanId !== undefined) t.span_id = spanId;
  if (parent !== undefined) t.parent_span_id = parent;
  const session = str(src['session_id']);
  const agent = str(src['agent_id']);
  if (session !== undefined) t.session_id = session;
  if (agent !== undefined) t.agent_id = agent;
  const step = src['step'];
  if (typeof step === 'number' && Number.isSafeInteger(step) && step >= 0) t.step = step;
  return Object.keys(t).length > 0 ? t : undefined;
}

function aiModelFrom(bag: Readonly<Record<string, unknown>>): AiModel | undefined {
  const name = str(bag['model']) ?? str(bag['model_name']);
  const provider = str(bag['model_provider']) ?? str(bag['ai_provider']) ?? str(bag['provider']);
  if (name === undefined || provider === undefined) return undefined;
  const version = str(bag['model_version']);
  return version === undefined ? { name, provider } : { name, provider, version };
}

/** Parse canonical meta text to an object; anything else (erased, corrupt, non-object) → {}. */
export function metaObject(meta: string | null): Readonly<Record<string, unknown>> {
  if (meta === null) return {};
  try {
    const v: unknown = JSON.parse(meta);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    // a corrupt meta is still carried verbatim as text; it just yields no trace/model context
    return {};
  }
}

/** The view of a ledger record. */
export function entryFromRecord(record: AuditRecord): EgressEntry {
  const meta = metaObject(record.meta);
  return {
    source: 'ledger',
    id: record.id,
    name: record.action,
    time: record.occurred_at,
    severity: ledgerSeverity(record),
    tenant: record.tenant,
    actor: record.actor,
    actorKind: record.actor_kind,
    targetKind: record.target_kind,
    targetId: record.target_id,
    title: record.action,
    meta: record.meta,
    integrity: integrityFields(record),
    fields: {},
    trace: agentTraceFrom(meta),
    aiModel: aiModelFrom(meta),
  };
}

/** The view of an egress event (notification, finding, eventing envelope). */
export function entryFromEvent(event: EgressEvent): EgressEntry {
  const f = event.fields;
  return {
    source: 'event',
    id: event.id,
    name: event.type,
    time: event.time,
    severity: event.severity,
    tenant: event.tenant,
    actor: str(f['actor']),
    actorKind: str(f['actor_kind']),
    targetKind: str(f['target_kind']),
    targetId: str(f['target_id']),
    title: event.title,
    meta: undefined,
    integrity: undefined,
    fields: f,
    trace: agentTraceFrom(f),
    aiModel: aiModelFrom(f),
  };
}

/** The verb of a dotted action: its last segment, lowercased (`agent.tool.exec` → `exec`). */
export function actionVerb(name: string): string {
  const i = name.lastIndexOf('.');
  return (i < 0 ? name : name.slice(i + 1)).toLowerCase();
}

/** The nouns of a dotted action (all but the verb), lowercased, plus the target kind. */
export function actionNouns(entry: Pick<EgressEntry, 'name' | 'targetKind'>): string[] {
  const parts = entry.name.toLowerCase().split('.');
  parts.pop();
  if (entry.targetKind !== undefined && entry.targetKind !== '') parts.push(entry.targetKind.toLowerCase());
  return parts;
}
