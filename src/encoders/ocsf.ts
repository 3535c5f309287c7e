/**
 * `ocsf`: OCSF 1.8.0 events with the `ai_operation` profile, one JSON object per line
 * (spec: OCSF rules). Class/activity selection is in `ocsf-class.ts`; this file builds the
 * class-required objects. Integrity fields and the agentic trace extension ride in `unmapped`
 * (DECISIONS.md "Encoders"); nothing that is unknown is invented into a normalised field.
 */
import type { DeviceIdentity, EncodeOptions, Encoder, Severity } from './encoder.js';
import { actionNouns, entryFromEvent, entryFromRecord, metaObject, type EgressEntry } from './egress-entry.js';
import { epochMillis } from './ledger-fields.js';
import { toJsonLine } from './json-line.js';
import { ocsfClassFor, type OcsfClassChoice } from './ocsf-class.js';

/** The pinned schema version (spec Formats table). */
export const OCSF_VERSION = '1.8.0';
/** Profiles declared in `metadata.profiles` (spec: OCSF rules). */
export const OCSF_PROFILES: readonly string[] = ['ai_operation'];

/** OCSF `severity_id` (dictionary.json): undetermined → 0 Unknown, never invented. */
export const OCSF_SEVERITY: Readonly<Record<Severity, { id: number; caption: string }>> = {
  info: { id: 1, caption: 'Informational' },
  low: { id: 2, caption: 'Low' },
  medium: { id: 3, caption: 'Medium' },
  high: { id: 4, caption: 'High' },
  critical: { id: 5, caption: 'Critical' },
  undetermined: { id: 0, caption: 'Unknown' },
};

/** OCSF `user.type_id` from the actor kind (objects/user.json). */
function userType(kind: string | undefined): { type_id: number; type?: string } {
  switch (kind) {
    case undefined:
    case '':
      return { type_id: 0 };
    case 'user':
      return { type_id: 1, type: 'User' };
    case 'admin':
    case 'superadmin':
      return { type_id: 2, type: 'Admin' };
    case 'system':
      return { type_id: 3, type: 'System' };
    case 'agent':
    case 'token':
    case 'service':
      return { type_id: 4, type: 'Service' };
    default:
      // 99 Other: the sibling `type` carries the source's label
      return { type_id: 99, type: kind };
  }
}

type Json = Record<string, unknown>;

function actorObject(entry: EgressEntry, device: DeviceIdentity): Json {
  // an event with no actor is reported by the control plane itself (actor needs at least one of
  // process, user, session, app_name, app_uid: objects/actor.json constraints)
  if (entry.actor === undefined) return { app_name: device.product };
  return { user: { uid: entry.actor, ...userType(entry.actorKind) } };
}

function stringFrom(bag: Readonly<Record<string, unknown>>, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = bag[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return undefined;
}

function contextBag(entry: EgressEntry): Readonly<Record<string, unknown>> {
  return entry.source === 'ledger' ? metaObject(entry.meta ?? null) : entry.fields;
}

/** Objects required (and the useful recommended ones) by the chosen class. */
function classObjects(entry: EgressEntry, cls: OcsfClassChoice, device: DeviceIdentity): Json {
  const target = entry.targetId !== undefined && entry.targetId !== '' ? entry.targetId : undefined;
  // src_endpoint is required by 6003/6005 but the ledger records no network address: the source is
  // named by the actor (network_endpoint needs one of ip, uid, name, hostname, …)
  const src_endpoint = { name: entry.actor ?? device.product };
  const dst_endpoint = { svc_name: device.product };
  if (cls.class_uid === 1007) {
    const bag = contextBag(entry);
    const process: Json = { uid: target ?? entry.id };
    const cmd = stringFrom(bag, 'command', 'cmd_line');
    if (cmd !== undefined) process['cmd_line'] = cmd;
    const name = stringFrom(bag, 'tool', 'tool_name', 'process_name');
    if (name !== undefined) process['name'] = name;
    const pid = bag['pid'];
    if (typeof pid === 'number' && Number.isSafeInteger(pid)) process['pid'] = pid;
    // the host the process ran on when recorded; else the reporting device (this control plane),
    // type 0 Unknown rather than a guessed device type
    const hostname = stringFrom(bag, 'hostname', 'host');
    const dev: Json = hostname !== undefined ? { type_id: 0, hostname } : { type_id: 0, name: device.product };
    return { process, device: dev };
  }
  if (cls.class_uid === 6005) {
    const nouns = actionNouns(entry);
    const label = target ?? nouns.find((n) => n !== '') ?? 'datastore';
    if (nouns.includes('bucket')) {
      return { src_endpoint, dst_endpoint, type_id: 2, type: 'Databucket', databucket: { name: label, type_id: 0 } };
    }
    if (nouns.includes('table')) {
      return { src_endpoint, dst_endpoint, type_id: 3, type: 'Table', table: { name: label } };
    }
    const vector = nouns.includes('vector_store') || nouns.includes('knowledge_base');
    return {
      src_endpoint, dst_endpoint, type_id: 1, type: 'Database',
      database: vector ? { name: label, type_id: 7, type: 'Vector' } : { name: label, type_id: 0 },
    };
  }
  const api: Json = { operation: entry.name, service: { name: device.product, version: device.version } };
  const out: Json = { api, src_endpoint, dst_endpoint };
  if (target !== undefined) {
    out['resources'] = [{ uid: target, ...(entry.targetKind ? { type: entry.targetKind } : {}), role_id: 1, role: 'Target' }];
  }
  return out;
}

function unmapped(entry: EgressEntry): Json {
  const u: Json = {};
  if (entry.integrity !== undefined) {
    // verbatim, every key present (payload_hash null when the record vouches for no payload)
    Object.assign(u, entry.integrity);
    u['actor_kind'] = entry.actorKind ?? '';
    u['target_kind'] = entry.targetKind ?? '';
    u['target_id'] = entry.targetId ?? '';
    u['meta'] = entry.meta ?? null;
    if (entry.meta == null) u['meta_erased'] = true;
  } else {
    u['event_type'] = entry.name;
    u['fields'] = entry.fields;
  }
  if (entry.trace !== undefined) u['trace'] = entry.trace;
  return u;
}

/** Map one entry to an OCSF 1.8.0 event object (pure mapping). */
export function ocsfEvent(entry: EgressEntry, device: DeviceIdentity): Json {
  const cls = ocsfClassFor(entry);
  const sev = OCSF_SEVERITY[entry.severity];
  const metadata: Json = {
    version: OCSF_VERSION,
    product: { vendor_name: device.vendor, name: device.product, version: device.version },
    profiles: [...OCSF_PROFILES],
    uid: entry.id,
    log_name: entry.source === 'ledger' ? 'audit' : 'events',
  };
  if (entry.tenant !== undefined) metadata['tenant_uid'] = entry.tenant;
  if (entry.integrity !== undefined) metadata['sequence'] = entry.integrity.seq;
  if (entry.time !== undefined) metadata['original_time'] = entry.time;
  const time = entry.time === undefined ? null : epochMillis(entry.time);
  const ev: Json = {
    class_uid: cls.class_uid,
    class_name: cls.class_name,
    category_uid: cls.category_uid,
    category_name: cls.category_name,
    activity_id: cls.activity_id,
    activity_name: cls.activity_name,
    type_uid: cls.type_uid,
    type_name: cls.type_name,
    // `time` is required; without a recorded or parseable time we send 0 and keep the text in
    // metadata.original_time / unmapped.occurred_at instead of inventing "now"
    time: time ?? 0,
    severity_id: sev.id,
    severity: sev.caption,
    message: entry.title,
    metadata,
    actor: actorObject(entry, device),
  };
  Object.assign(ev, classObjects(entry, cls, device));
  if (entry.aiModel !== undefined) {
    const m = entry.aiModel;
    ev['ai_model'] = { name: m.name, ai_provider: m.provider, ...(m.version !== undefined ? { version: m.version } : {}) };
  }
  ev['unmapped'] = unmapped(entry);
  return ev;
}

/** `ocsf`: OCSF 1.8.0, classes 6003 / 1007 / 6005 with the `ai_operation` profile. */
export const ocsfEncoder: Encoder = {
  token: 'ocsf',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record, opts: EncodeOptions): string {
    return toJsonLine(ocsfEvent(entryFromRecord(record), opts.device));
  },
  encodeEvent(event, opts: EncodeOptions): string {
    return toJsonLine(ocsfEvent(entryFromEvent(event), opts.device));
  },
};
