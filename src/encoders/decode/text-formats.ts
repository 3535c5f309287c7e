/** Ledger records back from CEF, LEEF 2.0 and RFC 5424 lines (the inverse of cef.ts, leef.ts, syslog.ts for records). */
import type { AuditRecord } from '../../ledger/record.js';
import { SD_ID } from '../syslog.js';
import { WIRE_ENC } from '../pct-c0.js';
import { cefExtensionPairs, leefAttributePairs, sdElementParams, splitEscaped } from './kv-text.js';
import { ExportDecodeError, recordFromFields, type RecordFieldName } from './record-fields.js';

/** CEF and LEEF carry the record's own fields under these keys (cef.ts, leef.ts, ledger-fields.ts `olvRecordPairs`). */
const OLV_KEYS: Partial<Record<RecordFieldName, string>> = {
  seq: 'olvSeq',
  tenant: 'olvTenant',
  occurred_at: 'olvOccurredAt',
  actor_kind: 'olvActorKind',
  target_kind: 'olvTargetKind',
  target_id: 'olvTargetId',
  meta: 'olvMeta',
  meta_erased: 'olvMetaErased',
  meta_commitment: 'olvMetaCommitment',
  payload_hash: 'olvPayloadHash',
  prev_hash: 'olvPrevHash',
  hash: 'olvHash',
  sig: 'olvSig',
  key_id: 'olvKeyId',
  id: 'externalId',
};

function checkWireEnc(value: string | undefined): void {
  // Without the layer's marker the values cannot be trusted to decode to the hashed bytes.
  if (value !== WIRE_ENC)
    throw new ExportDecodeError(`wire encoding is ${value === undefined ? 'missing' : JSON.stringify(value)}, not ${WIRE_ENC}`);
}

/** A ledger record from one `CEF:0|…` line (actor in `suser`, action in `act`). */
export function decodeCefRecord(line: string): AuditRecord {
  if (!line.startsWith('CEF:0|')) throw new ExportDecodeError('not a CEF:0 line');
  const { rest } = splitEscaped(line.slice(6), '|', 6);
  const ext = cefExtensionPairs(rest);
  checkWireEnc(ext.get('olvWireEnc'));
  return recordFromFields((name) =>
    name === 'actor' ? ext.get('suser') : name === 'action' ? ext.get('act') : ext.get(OLV_KEYS[name] as string),
  );
}

/** A ledger record from one `LEEF:2.0|…` line (actor in `usrName`, action in `cat`). */
export function decodeLeefRecord(line: string): AuditRecord {
  if (!line.startsWith('LEEF:2.0|')) throw new ExportDecodeError('not a LEEF:2.0 line');
  const { fields, rest } = splitEscaped(line.slice(9), '|', 5);
  const delimiter = delimiterOf(fields[4] as string);
  const attrs = leefAttributePairs(rest, delimiter);
  checkWireEnc(attrs.get('olvWireEnc'));
  return recordFromFields((name) =>
    name === 'actor' ? attrs.get('usrName') : name === 'action' ? attrs.get('cat') : attrs.get(OLV_KEYS[name] as string),
  );
}

/** LEEF 2.0 declares its delimiter as one character or `0x`/`x` and hex. */
function delimiterOf(spec: string): string {
  const hex = /^(?:0x|x)([0-9a-fA-F]{1,4})$/.exec(spec);
  if (hex) return String.fromCharCode(parseInt(hex[1] as string, 16));
  if (spec.length === 1) return spec;
  throw new ExportDecodeError(`LEEF delimiter ${JSON.stringify(spec)} is not one character or hex`);
}

/**
 * A ledger record from one RFC 5424 line: the native form (every field an SD-PARAM of
 * `[svc@32473 …]`), or a frame whose MSG is a CEF or LEEF line (a connector's `syslog` + carrier).
 */
export function decodeSyslogRecord(line: string): AuditRecord {
  const m = /^<\d{1,3}>1 (\S+) (\S+) (\S+) (\S+) (\S+) /.exec(line);
  if (!m) throw new ExportDecodeError('not an RFC 5424 line');
  const sd = line.slice(m[0].length);
  if (sd.startsWith('- ')) {
    const msg = sd.slice(2);
    if (msg.startsWith('CEF:0|')) return decodeCefRecord(msg);
    if (msg.startsWith('LEEF:2.0|')) return decodeLeefRecord(msg);
    throw new ExportDecodeError('no structured data and no CEF or LEEF message');
  }
  const { params } = sdElementParams(sd, SD_ID);
  checkWireEnc(params.get('wire_enc'));
  return recordFromFields((name) => params.get(name));
}
