/**
 * Reading a ledger export back (`svc audit verify --file`): which format a line is in, the record
 * it carries, and the export's terminator (DECISIONS.md "Export": `# export-complete count=N
 * last_seq=S` after text formats, `{"export_complete":true,"count":N,"last_seq":S}` after JSON ones).
 * `records` is the NDJSON of records as `GET /v1/audit` serves them (meta blinds included).
 */
import type { AuditRecord } from '../../ledger/record.js';
import { decodeCefRecord, decodeLeefRecord, decodeSyslogRecord } from './text-formats.js';
import { decodeOcsfEvent, decodeOtlpLogRecord, envelopeLogRecord } from './json-formats.js';
import { ExportDecodeError } from './record-fields.js';
import type { FileFormat } from './formats.js';

export { ExportDecodeError } from './record-fields.js';

export { FILE_FORMATS, type FileFormat } from './formats.js';

/** What one line of a file is. */
export type ExportLine =
  | { kind: 'record'; record: AuditRecord }
  | { kind: 'terminator'; count: number; lastSeq: number }
  | { kind: 'blank' };

const TEXT_TERMINATOR = /^# export-complete count=(\d+) last_seq=(\d+)$/;

/** The format of a file from its first record line; null when it is none of {@link FILE_FORMATS}. */
export function detectFormat(line: string): FileFormat | null {
  if (line.startsWith('CEF:0|')) return 'cef';
  if (line.startsWith('LEEF:2.0|')) return 'leef';
  if (/^<\d{1,3}>1 /.test(line)) return 'syslog';
  if (!line.startsWith('{')) return null;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if ('resourceLogs' in o) return 'otlp_envelope';
  if ('attributes' in o && 'timeUnixNano' in o) return 'otlp_log_record';
  if ('class_uid' in o && 'unmapped' in o) return 'ocsf';
  if ('seq' in o && 'hash' in o && 'sig' in o) return 'records';
  return null;
}

/** Decodes one line of a file in `format`; throws ExportDecodeError when the line is not a record of it. */
export function decodeLine(format: FileFormat, raw: string): ExportLine {
  const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line.trim() === '') return { kind: 'blank' };
  const text = TEXT_TERMINATOR.exec(line);
  if (text) return { kind: 'terminator', count: Number(text[1]), lastSeq: Number(text[2]) };
  switch (format) {
    case 'cef':
      return { kind: 'record', record: decodeCefRecord(line) };
    case 'leef':
      return { kind: 'record', record: decodeLeefRecord(line) };
    case 'syslog':
      return { kind: 'record', record: decodeSyslogRecord(line) };
    default:
      return decodeJsonLine(format, line);
  }
}

function decodeJsonLine(format: FileFormat, line: string): ExportLine {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new ExportDecodeError('not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ExportDecodeError('not a JSON object');
  const o = v as Record<string, unknown>;
  if (o['export_complete'] === true) {
    const count = o['count'];
    const lastSeq = o['last_seq'];
    if (!Number.isSafeInteger(count) || !Number.isSafeInteger(lastSeq))
      throw new ExportDecodeError('terminator without integer count and last_seq');
    return { kind: 'terminator', count: count as number, lastSeq: lastSeq as number };
  }
  switch (format) {
    case 'records':
      return { kind: 'record', record: o as unknown as AuditRecord };
    case 'otlp':
    case 'otlp_envelope':
      return { kind: 'record', record: decodeOtlpLogRecord(envelopeLogRecord(o)) };
    case 'otlp_log_record':
      return { kind: 'record', record: decodeOtlpLogRecord(o) };
    case 'ocsf':
      return { kind: 'record', record: decodeOcsfEvent(o) };
    default:
      throw new ExportDecodeError(`${format} lines are not JSON`);
  }
}
