/**
 * A bus event (notification, finding) in the shared encoders' egress form, and the connector's
 * severity filter. The severity is the event's own `data.severity` when it is one of the product
 * severities; otherwise it is `undetermined` (never invented) and such an event passes only a
 * connector without `min_severity`.
 */
import type { EgressEvent, Severity } from '../../encoders/encoder.js';
import { cloudEvent } from '../../events/event-log.js';
import type { BusEvent } from '../../events/event-types.js';
import { SEVERITIES, type MinSeverity } from './connector-store.js';

export function eventSeverity(e: BusEvent): Severity {
  const s = e.data['severity'];
  return typeof s === 'string' && (SEVERITIES as readonly string[]).includes(s) ? (s as Severity) : 'undetermined';
}

/** True when the event is at or above `min` (no minimum: every event). */
export function passesSeverity(e: BusEvent, min: MinSeverity | null): boolean {
  if (min === null) return true;
  const s = eventSeverity(e);
  return s !== 'undetermined' && SEVERITIES.indexOf(s) >= SEVERITIES.indexOf(min);
}

export function egressEvent(e: BusEvent): EgressEvent {
  const fields: EgressEvent['fields'] = { source: e.source, subject: e.subject };
  if (e.sequence !== undefined) fields['sequence'] = e.sequence;
  for (const [k, v] of Object.entries(e.data)) {
    fields[`data.${k}`] = v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : JSON.stringify(v);
  }
  return {
    id: e.id,
    type: e.type,
    time: e.time,
    severity: eventSeverity(e),
    tenant: e.tenant,
    title: `${e.type} ${e.subject}`,
    fields,
    raw: cloudEvent(e),
  };
}
