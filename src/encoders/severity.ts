/** One severity mapping for all encoders (spec: Events → Severity mapping). */
import type { Severity } from './encoder.js';

/** One row of the spec's severity table. `udm: null` means the field is omitted. */
export interface SeverityRow {
  cef: number;
  syslog: number;
  otlpText: string;
  /** OTLP SeverityNumber (opentelemetry-proto logs.proto): INFO=9 INFO2=10 WARN=13 ERROR=17 FATAL=21 UNSPECIFIED=0 */
  otlpNumber: number;
  ecs: number;
  udm: string | null;
  /** LEEF 2.0 `sev` is 1..10; undetermined is emitted as 1 (spec: LEEF rule 1) */
  leef: number;
}

export const SEVERITY: Readonly<Record<Severity, SeverityRow>> = Object.freeze({
  info: { cef: 1, syslog: 6, otlpText: 'INFO', otlpNumber: 9, ecs: 1, udm: 'INFORMATIONAL', leef: 1 },
  low: { cef: 3, syslog: 5, otlpText: 'INFO2', otlpNumber: 10, ecs: 3, udm: 'LOW', leef: 3 },
  medium: { cef: 5, syslog: 4, otlpText: 'WARN', otlpNumber: 13, ecs: 5, udm: 'MEDIUM', leef: 5 },
  high: { cef: 7, syslog: 3, otlpText: 'ERROR', otlpNumber: 17, ecs: 7, udm: 'HIGH', leef: 7 },
  critical: { cef: 10, syslog: 2, otlpText: 'FATAL', otlpNumber: 21, ecs: 10, udm: 'CRITICAL', leef: 10 },
  undetermined: { cef: 0, syslog: 6, otlpText: 'UNSPECIFIED', otlpNumber: 0, ecs: 0, udm: null, leef: 1 },
});

/** The five determined severities, lowest first. */
export const DETERMINED_SEVERITIES: readonly Severity[] = ['info', 'low', 'medium', 'high', 'critical'];
