/**
 * `asim`: Microsoft Sentinel ASIM Audit Event schema (`EventSchema` "AuditEvent", version 0.1),
 * one record per line for a Log Analytics custom table (notification connectors). Integrity fields
 * ride verbatim in `AdditionalFields`.
 *
 * ASIM `EventSeverity` has only Informational, Low, Medium and High: `critical` is sent as High and
 * `EventOriginalSeverity` keeps the product severity, so the five stay distinguishable. An
 * undetermined severity omits `EventSeverity` (never invented). `EventResult` is "NA": an audit
 * record states that an action was recorded, not its outcome.
 */
import type { DeviceIdentity, EncodeOptions, Encoder, Severity } from './encoder.js';
import { actionNouns, actionVerb, entryFromEvent, entryFromRecord, type EgressEntry } from './egress-entry.js';
import { toJsonLine } from './json-line.js';
import { ocsfClassFor } from './ocsf-class.js';
import { parseRfc3339 } from './otlp-time.js';

const ASIM_SEVERITY: Readonly<Record<Severity, string | null>> = {
  info: 'Informational', low: 'Low', medium: 'Medium', high: 'High', critical: 'High', undetermined: null,
};

const ASIM_EVENT_TYPE: Readonly<Record<string, string>> = {
  create: 'Create', read: 'Read', export: 'Read', get: 'Read', list: 'Read',
  update: 'Set', set: 'Set', delete: 'Delete', remove: 'Delete', enable: 'Enable', disable: 'Disable',
  install: 'Install',
};

/** ASIM `EventType` of the Audit Event schema. */
export function asimEventType(entry: EgressEntry): string {
  if (ocsfClassFor(entry).class_uid === 1007) return 'Execute';
  const verb = actionVerb(entry.name);
  return Object.hasOwn(ASIM_EVENT_TYPE, verb) ? (ASIM_EVENT_TYPE[verb] as string) : 'Other';
}

/** ASIM `ObjectType` (Cloud Resource, Configuration Atom, Policy Rule, Other). */
function objectType(entry: EgressEntry): string {
  const nouns = actionNouns(entry);
  if (nouns.some((n) => n.includes('policy') || n.includes('rule'))) return 'Policy Rule';
  if (nouns.some((n) => n.includes('setting') || n.includes('config'))) return 'Configuration Atom';
  return 'Other';
}

/** ASIM `ActorUserType` from our actor kind. */
function actorUserType(kind: string | undefined): string {
  switch (kind) {
    case 'user': return 'Regular';
    case 'admin': case 'superadmin': return 'Admin';
    case 'system': return 'System';
    case 'agent': return 'Application';
    case 'token': case 'service': return 'Service';
    default: return 'Other';
  }
}

/** Map one entry to an ASIM Audit Event record (pure mapping). */
export function asimRecord(entry: EgressEntry, device: DeviceIdentity): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (entry.time !== undefined && parseRfc3339(entry.time) !== null) {
    Object.assign(out, { TimeGenerated: entry.time, EventStartTime: entry.time, EventEndTime: entry.time });
  }
  Object.assign(out, {
    EventCount: 1,
    EventType: asimEventType(entry),
    EventResult: 'NA',
  });
  const sev = ASIM_SEVERITY[entry.severity];
  if (sev !== null) out['EventSeverity'] = sev;
  Object.assign(out, {
    EventOriginalSeverity: entry.severity,
    EventOriginalType: entry.name,
    EventOriginalUid: entry.id,
    EventMessage: entry.title,
    EventProduct: device.product,
    EventProductVersion: device.version,
    EventVendor: device.vendor,
    EventSchema: 'AuditEvent',
    EventSchemaVersion: '0.1',
    Operation: entry.name,
  });
  if (entry.targetId !== undefined && entry.targetId !== '') {
    Object.assign(out, { Object: entry.targetId, ObjectType: objectType(entry) });
  }
  if (entry.actor !== undefined) {
    Object.assign(out, { ActorUserId: entry.actor, ActorUserIdType: 'Other', ActorUserType: actorUserType(entry.actorKind) });
  }
  const additional: Record<string, unknown> = {};
  if (entry.integrity !== undefined) {
    Object.assign(additional, entry.integrity, {
      actor_kind: entry.actorKind ?? '',
      target_kind: entry.targetKind ?? '',
      meta: entry.meta ?? null,
    });
  } else {
    if (entry.tenant !== undefined) additional['tenant'] = entry.tenant;
    additional['fields'] = entry.fields;
  }
  if (entry.trace !== undefined) additional['trace'] = entry.trace;
  out['AdditionalFields'] = additional;
  return out;
}

/** `asim`: ASIM Audit Event records, one per line. */
export const asimEncoder: Encoder = {
  token: 'asim',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record, opts: EncodeOptions): string {
    return toJsonLine(asimRecord(entryFromRecord(record), opts.device));
  },
  encodeEvent(event, opts: EncodeOptions): string {
    return toJsonLine(asimRecord(entryFromEvent(event), opts.device));
  },
};
