/**
 * A subscription's `sink_format` rendering (spec: accepted tokens, eventing sink; OTLP rule 5): `json`
 * posts the CloudEvents envelope as is; the other tokens render the event with the shared encoders
 * (src/encoders), the envelope riding along as the event's raw form. `otlp` and `otlp_envelope` are
 * one encoding: a complete OTLP/HTTP JSON export-logs request.
 */
import type { EgressEvent } from '../../encoders/encoder.js';
import { encoderFor } from '../../encoders/registry.js';
import { cloudEvent } from '../../events/event-log.js';
import type { BusEvent } from '../../events/event-types.js';

export interface Rendered {
  body: string;
  contentType: string;
}

/** The egress form of an event: flat displayable fields, the envelope as `raw`. */
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
    severity: 'info',
    tenant: e.tenant,
    title: `${e.type} ${e.subject}`,
    fields,
    raw: cloudEvent(e),
  };
}

/** Renders one event for a stored token; a corrupt token throws (no fall-back to JSON). */
export function render(format: string, e: BusEvent, version: string): Rendered {
  if (format === 'json') return { body: JSON.stringify(cloudEvent(e)), contentType: 'application/cloudevents+json' };
  const enc = encoderFor('eventing_sink', format);
  if (!enc.encodeEvent) throw new Error(`sink_format ${format} cannot encode events`);
  const body = enc.encodeEvent(egressEvent(e), { device: { vendor: 'svc', product: 'control-plane', version } });
  return { body, contentType: enc.json ? 'application/json' : 'text/plain; charset=utf-8' };
}

// Rendered bodies by event and format: a hundred subscriptions of one format post the same bytes.
const rendered = new Map<string, Rendered>();
const RENDER_CACHE_MAX = 4_096;

/** `render`, remembered for the last few thousand (event, format) pairs. */
export function renderCached(format: string, e: BusEvent, version: string): Rendered {
  const key = `${format}\u0000${e.id}\u0000${e.sequence ?? ''}`;
  let r = rendered.get(key);
  if (r) return r;
  r = render(format, e, version);
  if (rendered.size >= RENDER_CACHE_MAX) rendered.delete(rendered.keys().next().value as string);
  rendered.set(key, r);
  return r;
}
