/**
 * `otlp` / `otlp_envelope`: each line a complete OTLP/HTTP JSON `ExportLogsServiceRequest`
 * (opentelemetry-proto v1.4.0 `collector/logs/v1/logs_service.proto`) with resource identity and
 * instrumentation scope (spec: OTLP rule 1). The two tokens are byte-identical (Formats table).
 */
import type { DeviceIdentity, EncodeOptions, Encoder } from './encoder.js';
import { entryFromEvent, entryFromRecord, type EgressEntry } from './egress-entry.js';
import { toJsonLine } from './json-line.js';
import { otlpLogRecord, type OtlpKeyValue, type OtlpLogRecord } from './otlp-log-record.js';

/** `service.name` of every OTLP resource (DECISIONS.md "Encoders"). */
export const OTLP_SERVICE_NAME = 'control-plane';
/** Instrumentation scope of ledger records. */
export const OTLP_AUDIT_SCOPE = 'svc.audit';
/** Instrumentation scope of egress events (notifications, findings, eventing). */
export const OTLP_EVENT_SCOPE = 'svc.events';

/** OTLP `ExportLogsServiceRequest` in JSON form. */
export interface OtlpExportLogsRequest {
  resourceLogs: Array<{
    resource: { attributes: OtlpKeyValue[] };
    scopeLogs: Array<{ scope: { name: string; version: string }; logRecords: OtlpLogRecord[] }>;
  }>;
}

/** Wrap one entry in a complete export request (pure mapping). */
export function otlpExportRequest(entry: EgressEntry, device: DeviceIdentity): OtlpExportLogsRequest {
  return {
    resourceLogs: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: OTLP_SERVICE_NAME } },
            { key: 'service.version', value: { stringValue: device.version } },
          ],
        },
        scopeLogs: [
          {
            scope: { name: entry.source === 'ledger' ? OTLP_AUDIT_SCOPE : OTLP_EVENT_SCOPE, version: device.version },
            logRecords: [otlpLogRecord(entry)],
          },
        ],
      },
    ],
  };
}

function makeEncoder(token: 'otlp' | 'otlp_envelope'): Encoder {
  return {
    token,
    contentType: 'application/x-ndjson',
    json: true,
    encodeRecord(record, opts: EncodeOptions): string {
      return toJsonLine(otlpExportRequest(entryFromRecord(record), opts.device));
    },
    encodeEvent(event, opts: EncodeOptions): string {
      return toJsonLine(otlpExportRequest(entryFromEvent(event), opts.device));
    },
  };
}

/** `otlp`: complete export-logs request per line. */
export const otlpEncoder: Encoder = makeEncoder('otlp');
/** `otlp_envelope`: byte-identical alias of `otlp` (spec Formats table). */
export const otlpEnvelopeEncoder: Encoder = makeEncoder('otlp_envelope');
