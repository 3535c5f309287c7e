/**
 * `ecs`: Elastic Common Schema 9.4.0 documents (search-engine connector). Standard fields where ECS
 * has them (`@timestamp`, `event.*`, `user.id`, `organization.id`, `trace.id`, `span.id`,
 * `observer.*`); everything of ours under the custom `svc.*` namespace, as ECS recommends for
 * non-ECS fields. Integrity fields ride verbatim in `svc.audit`.
 */
import type { DeviceIdentity, EncodeOptions, Encoder } from './encoder.js';
import { actionVerb, entryFromEvent, entryFromRecord, type EgressEntry } from './egress-entry.js';
import { toJsonLine } from './json-line.js';
import { ocsfClassFor } from './ocsf-class.js';
import { parseRfc3339 } from './otlp-time.js';
import { SEVERITY } from './severity.js';

/** The pinned ECS version (spec Formats table). */
export const ECS_VERSION = '9.4.0';

const IAM_NOUNS = new Set(['user', 'token', 'membership', 'role', 'login', 'session', 'auth', 'password', 'key']);

/** ECS `event.type` by verb (allowed values of the ECS 9 categorisation fields). */
const ECS_TYPE: Readonly<Record<string, string>> = {
  create: 'creation', update: 'change', delete: 'deletion', remove: 'deletion', revoke: 'deletion',
  read: 'access', export: 'access', get: 'access', list: 'access', query: 'access',
};

/** `event.category` / `event.type` (ECS categorisation fields), reusing the OCSF class choice. */
export function ecsCategorisation(entry: EgressEntry): { category: string[]; type: string[] } {
  const cls = ocsfClassFor(entry);
  const verb = actionVerb(entry.name);
  if (cls.class_uid === 1007) {
    const type = cls.activity_id === 1 ? 'start' : cls.activity_id === 2 ? 'end' : 'info';
    return { category: ['process'], type: [type] };
  }
  const type = Object.hasOwn(ECS_TYPE, verb) ? (ECS_TYPE[verb] as string) : 'info';
  if (cls.class_uid === 6005) return { category: ['database'], type: [type] };
  const nouns = entry.name.toLowerCase().split('.').slice(0, -1);
  if (nouns.some((n) => IAM_NOUNS.has(n))) return { category: ['iam'], type: [type] };
  return { category: ['configuration'], type: [type] };
}

/** Map one entry to an ECS document (pure mapping). */
export function ecsDocument(entry: EgressEntry, device: DeviceIdentity): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  // @timestamp only when recorded and parseable: ECS lets the pipeline set ingest time otherwise,
  // which is honest; we never invent one
  if (entry.time !== undefined && parseRfc3339(entry.time) !== null) doc['@timestamp'] = entry.time;
  doc['ecs'] = { version: ECS_VERSION };
  doc['message'] = entry.title;
  const event: Record<string, unknown> = {
    kind: 'event',
    ...ecsCategorisation(entry),
    action: entry.name,
    id: entry.id,
    severity: SEVERITY[entry.severity].ecs,
    dataset: entry.source === 'ledger' ? 'svc.audit' : 'svc.events',
    module: 'svc',
    provider: device.product,
  };
  if (entry.integrity !== undefined) {
    event['sequence'] = entry.integrity.seq;
    // ECS event.hash: "hash of raw field to be able to demonstrate log integrity"
    event['hash'] = entry.integrity.hash;
  }
  doc['event'] = event;
  doc['observer'] = { vendor: device.vendor, product: device.product, version: device.version };
  if (entry.actor !== undefined) doc['user'] = { id: entry.actor };
  if (entry.tenant !== undefined) doc['organization'] = { id: entry.tenant };
  if (entry.trace?.trace_id !== undefined) doc['trace'] = { id: entry.trace.trace_id };
  if (entry.trace?.span_id !== undefined) doc['span'] = { id: entry.trace.span_id };
  const svc: Record<string, unknown> = { severity: entry.severity };
  if (entry.integrity !== undefined) {
    svc['audit'] = {
      ...entry.integrity,
      id: entry.id,
      actor: entry.actor ?? '',
      actor_kind: entry.actorKind ?? '',
      action: entry.name,
      target_kind: entry.targetKind ?? '',
      target_id: entry.targetId ?? '',
      meta: entry.meta ?? null,
    };
  } else {
    svc['event'] = { type: entry.name, fields: entry.fields };
  }
  if (entry.trace !== undefined) svc['trace'] = entry.trace;
  doc['svc'] = svc;
  return doc;
}

/** `ecs`: ECS 9.4.0 documents, one per line. */
export const ecsEncoder: Encoder = {
  token: 'ecs',
  contentType: 'application/x-ndjson',
  json: true,
  encodeRecord(record, opts: EncodeOptions): string {
    return toJsonLine(ecsDocument(entryFromRecord(record), opts.device));
  },
  encodeEvent(event, opts: EncodeOptions): string {
    return toJsonLine(ecsDocument(entryFromEvent(event), opts.device));
  },
};
