/** Ledger records back from the JSON export formats: OTLP (envelope and bare log record) and OCSF. */
import type { AuditRecord } from '../../ledger/record.js';
import { AUDIT_ATTR_PREFIX } from '../otlp-log-record.js';
import { ExportDecodeError, recordFromFields } from './record-fields.js';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The one log record of an `otlp` / `otlp_envelope` line (a complete export-logs request). */
export function envelopeLogRecord(line: Obj): Obj {
  const rl = line['resourceLogs'];
  const sl = Array.isArray(rl) && rl.length === 1 && isObj(rl[0]) ? rl[0]['scopeLogs'] : undefined;
  const lr = Array.isArray(sl) && sl.length === 1 && isObj(sl[0]) ? sl[0]['logRecords'] : undefined;
  if (!Array.isArray(lr) || lr.length !== 1 || !isObj(lr[0]))
    throw new ExportDecodeError('an export line holds exactly one resourceLogs → scopeLogs → logRecords entry');
  return lr[0];
}

/** A ledger record from an OTLP log record's `svc.audit.*` attributes. */
export function decodeOtlpLogRecord(rec: Obj): AuditRecord {
  const attrs = rec['attributes'];
  if (!Array.isArray(attrs)) throw new ExportDecodeError('log record has no attributes');
  const values = new Map<string, string | null>();
  for (const a of attrs) {
    if (!isObj(a) || typeof a['key'] !== 'string' || !a['key'].startsWith(AUDIT_ATTR_PREFIX) || !isObj(a['value'])) continue;
    const v = a['value'];
    // stringValue for text, intValue (a decimal string in protobuf JSON) for seq, {} for null.
    const text =
      typeof v['stringValue'] === 'string'
        ? v['stringValue']
        : typeof v['intValue'] === 'string'
          ? v['intValue']
          : Object.keys(v).length === 0
            ? null
            : undefined;
    if (text === undefined) throw new ExportDecodeError(`attribute ${a['key']} has an unexpected value type`);
    values.set(a['key'].slice(AUDIT_ATTR_PREFIX.length), text);
  }
  return recordFromFields((name) => values.get(name));
}

/** A ledger record from an OCSF event: hashed fields under `unmapped`, actor in `actor.user.uid`, action in `message`. */
export function decodeOcsfEvent(ev: Obj): AuditRecord {
  const u = ev['unmapped'];
  if (!isObj(u)) throw new ExportDecodeError('OCSF event has no unmapped object');
  const actor = isObj(ev['actor']) && isObj(ev['actor']['user']) ? ev['actor']['user']['uid'] : undefined;
  const meta = isObj(ev['metadata']) ? ev['metadata'] : {};
  return recordFromFields((name) => {
    const v = name === 'actor' ? actor : name === 'action' ? ev['message'] : name === 'id' ? meta['uid'] : u[name];
    if (name === 'seq' && typeof v === 'number') return String(v);
    if (name === 'meta_erased' && v === true) return 'true';
    return typeof v === 'string' || v === null ? v : undefined;
  });
}
