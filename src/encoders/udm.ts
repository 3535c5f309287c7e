/**
 * `udm`: Google SecOps (Chronicle) Unified Data Model events in proto3 JSON form (chronicle-style
 * connector). `metadata` names the product and event; `principal` is the actor, `target` the
 * resource; `security_result[].severity` from the one severity map and omitted entirely when the
 * severity is undetermined (spec: Severity mapping, UDM column). Integrity fields ride verbatim in
 * `additional` (a `google.protobuf.Struct`, i.e. a plain JSON object) under `svc.audit.<field>`.
 */
import type { DeviceIdentity, EncodeOptions, Encoder } from './encoder.js';
import { actionVerb, entryFromEvent, entryFromRecord, type EgressEntry } from './egress-entry.js';
import { toJsonLine } from './json-line.js';
import { parseRfc3339 } from './otlp-time.js';
import { SEVERITY } from './severity.js';

const RESOURCE_EVENT: Readonly<Record<string, string>> = {
  create: 'USER_RESOURCE_CREATION',
  update: 'USER_RESOURCE_UPDATE_CONTENT',
  delete: 'USER_RESOURCE_DELETION',
  remove: 'USER_RESOURCE_DELETION',
  read: 'USER_RESOURCE_ACCESS',
  export: 'USER_RESOURCE_ACCESS',
  get: 'USER_RESOURCE_ACCESS',
  list: 'USER_RESOURCE_ACCESS',
};

/**
 * UDM `metadata.event_type`. The USER_RESOURCE_* types require both a principal user and a target
 * resource in UDM, so they are chosen only when both are known; anything else is GENERIC_EVENT.
 */
export function udmEventType(entry: EgressEntry): string {
  const verb = actionVerb(entry.name);
  const hasTarget = entry.targetId !== undefined && entry.targetId !== '';
  if (entry.actor !== undefined && hasTarget && Object.hasOwn(RESOURCE_EVENT, verb)) return RESOURCE_EVENT[verb] as string;
  return 'GENERIC_EVENT';
}

/** Map one entry to a UDM event (pure mapping). */
export function udmEvent(entry: EgressEntry, device: DeviceIdentity): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  // Timestamp JSON accepts RFC 3339; an absent or unparseable time is left out, never invented
  if (entry.time !== undefined && parseRfc3339(entry.time) !== null) metadata['event_timestamp'] = entry.time;
  Object.assign(metadata, {
    event_type: udmEventType(entry),
    vendor_name: device.vendor,
    product_name: device.product,
    product_version: device.version,
    product_event_type: entry.name,
    product_log_id: entry.id,
    description: entry.title,
  });
  const out: Record<string, unknown> = { metadata };
  if (entry.actor !== undefined) out['principal'] = { user: { userid: entry.actor } };
  if (entry.targetId !== undefined && entry.targetId !== '') {
    out['target'] = { resource: { name: entry.targetId, resource_subtype: entry.targetKind ?? '' } };
  }
  const udmSeverity = SEVERITY[entry.severity].udm;
  if (udmSeverity !== null) out['security_result'] = [{ severity: udmSeverity }];
  const additional: Record<string, unknown> = {};
  if (entry.integrity !== undefined) {
    for (const [k, v] of Object.entries(entry.integrity)) additional[`svc.audit.${k}`] = v;
    additional['svc.audit.actor_kind'] = entry.actorKind ?? '';
    additional['svc.audit.meta'] = entry.meta ?? null;
  } else {
    if (entry.tenant !== undefined) additional['svc.event.tenant'] = entry.tenant;
    for (const [k, v] of Object.entries(entry.fields)) additional[`svc.event.fields.${k}`] = v;
  }
  if (entry.trace !== undefined) {
    for (const [k, v] of Object.entries(entry.trace)) additional[`svc.trace.${k}`] = v;
  }
  out['additional'] = additional;
  return out;
}

/** `udm`: Chronicle UDM events, one per line. */
export const udmEncoder: Encoder = {
  token: 'udm',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record, opts: EncodeOptions): string {
    return toJsonLine(udmEvent(entryFromRecord(record), opts.device));
  },
  encodeEvent(event, opts: EncodeOptions): string {
    return toJsonLine(udmEvent(entryFromEvent(event), opts.device));
  },
};
