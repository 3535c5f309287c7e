/**
 * Checks the ingestion-health route runs, so a pinned version is verified, not asserted: a probe
 * ledger record is encoded by the engine's own encoders, read back by the independent decoders
 * (src/encoders/decode), and the version markers of each format are read off the output. A check
 * that throws or finds a different marker reports `verified: false` with what it saw.
 */
import { asimEncoder } from '../../encoders/asim.js';
import type { DeviceIdentity } from '../../encoders/encoder.js';
import { decodeLine, type FileFormat } from '../../encoders/decode/index.js';
import { OCSF_VERSION } from '../../encoders/ocsf.js';
import { encoderFor } from '../../encoders/registry.js';
import type { AuditRecord } from '../../ledger/record.js';
import { parseTraceparent, TRACE_CONTEXT_VERSION } from '../../http/trace-context.js';

export interface CheckResult {
  verified: boolean;
  /** what the check did and saw */
  detail: string;
}

const HEX64 = 'ab'.repeat(32);
const PROBE: AuditRecord = {
  id: '01890a5d-ac96-774b-bcce-b302099a8057',
  tenant: '01890a5d-ac96-774b-bcce-b302099a8058',
  seq: 7,
  occurred_at: '2026-06-02T10:00:00.000000000Z',
  actor: 'system',
  actor_kind: 'system',
  action: 'observability.probe',
  target_kind: 'probe',
  target_id: '',
  meta: '{"probe":true}',
  meta_blind: 'cd'.repeat(32),
  meta_commitment: 'ef'.repeat(32),
  payload_hash: null,
  prev_hash: HEX64,
  hash: '12'.repeat(32),
  sig: 'c2ln',
  key_id: 'probe-key',
};

function attempt(fn: () => CheckResult): CheckResult {
  try {
    return fn();
  } catch (err) {
    return { verified: false, detail: `check failed: ${(err as Error).message}` };
  }
}

/** Encodes the probe in a ledger-export format and decodes it back; true when the integrity fields survive. */
function roundTrip(format: FileFormat & string, device: DeviceIdentity): { line: string; ok: boolean } {
  const line = encoderFor('ledger_export', format).encodeRecord(PROBE, { device });
  const back = decodeLine(format, line);
  const ok = back.kind === 'record' && back.record.hash === PROBE.hash && back.record.seq === PROBE.seq && back.record.sig === PROBE.sig;
  return { line, ok };
}

export function checkOcsf(device: DeviceIdentity): CheckResult {
  return attempt(() => {
    const { line, ok } = roundTrip('ocsf', device);
    const ev = JSON.parse(line) as { metadata?: { version?: string }; class_uid?: number };
    const version = ev.metadata?.version;
    return {
      verified: ok && version === OCSF_VERSION,
      detail:
        `probe encoded as class ${ev.class_uid}, metadata.version ${JSON.stringify(version)}, pinned ${OCSF_VERSION}; decoded back ` +
        `${ok ? 'with' : 'WITHOUT'} its integrity fields`,
    };
  });
}

export function checkAsim(device: DeviceIdentity): CheckResult {
  return attempt(() => {
    const rec = JSON.parse(asimEncoder.encodeRecord(PROBE, { device })) as { EventSchema?: string; EventSchemaVersion?: string };
    return {
      verified: rec.EventSchema === 'AuditEvent' && rec.EventSchemaVersion === '0.1',
      detail:
        `probe encoded as EventSchema ${JSON.stringify(rec.EventSchema)} version ${JSON.stringify(rec.EventSchemaVersion)}, pinned ` +
        `AuditEvent 0.1`,
    };
  });
}

export function checkSiemFormats(device: DeviceIdentity): CheckResult {
  return attempt(() => {
    const seen: string[] = [];
    let all = true;
    const markers: Array<[FileFormat & string, (line: string) => boolean, string]> = [
      ['cef', (l) => l.startsWith('CEF:0|'), 'CEF:0'],
      ['leef', (l) => l.startsWith('LEEF:2.0|'), 'LEEF:2.0'],
      ['syslog', (l) => /^<\d{1,3}>1 /.test(l), 'RFC 5424 VERSION 1'],
      ['otlp_log_record', (l) => 'timeUnixNano' in (JSON.parse(l) as object), 'OTLP/JSON LogRecord'],
    ];
    for (const [format, marker, name] of markers) {
      const { line, ok } = roundTrip(format, device);
      const good = ok && marker(line);
      all &&= good;
      seen.push(`${format}: ${name} ${good ? 'verified' : 'NOT verified'}`);
    }
    return { verified: all, detail: `probe encoded and decoded back in each format: ${seen.join('; ')}` };
  });
}

export function checkTraceContext(): CheckResult {
  return attempt(() => {
    // The example of the W3C Trace Context recommendation, and one it says must be refused.
    const good = parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    const bad = parseTraceparent('00-00000000000000000000000000000000-00f067aa0ba902b7-01');
    const ok = good?.trace_id === '4bf92f3577b34da6a3ce929d0e0e4736' && bad === undefined;
    return {
      verified: ok,
      detail:
        `traceparent version ${TRACE_CONTEXT_VERSION}: the recommendation's example parses and an all-zero trace id is refused ` +
        `(${ok ? 'as expected' : 'NOT as expected'})`,
    };
  });
}

export function checkPrometheus(contentType: string, text: string): CheckResult {
  return attempt(() => {
    const version = /version=([0-9.]+)/.exec(contentType)?.[1];
    const typed = /^# TYPE svc_http_requests_total counter$/m.test(text);
    return {
      verified: version === '0.0.4' && typed,
      detail:
        `exposition content type ${JSON.stringify(contentType)}; svc_http_requests_total ${typed ? 'declared' : 'NOT declared'} as a ` +
        `counter; pinned text format 0.0.4`,
    };
  });
}
