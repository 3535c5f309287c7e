/**
 * Format tokens per surface (spec: Events → "Accepted tokens per surface" and rules 1–3).
 * A token outside a surface's list is rejected where it is configured (`parseFormatToken`); a corrupt
 * stored value fails at encode time naming its spelling (`encoderFor`); nothing falls back to JSON.
 */
import type { Encoder } from './encoder.js';
import { asimEncoder } from './asim.js';
import { cefEncoder } from './cef.js';
import { ecsEncoder } from './ecs.js';
import { jsonEncoder, jsonProjectionEncoder } from './json.js';
import { leefEncoder } from './leef.js';
import { ocsfEncoder } from './ocsf.js';
import { otlpLogRecordEncoder } from './otlp-log-record.js';
import { otlpEncoder, otlpEnvelopeEncoder } from './otlp.js';
import { syslogCefEncoder, syslogEncoder, syslogLeefEncoder } from './syslog.js';
import { udmEncoder } from './udm.js';

/** A place where a format token is configured. */
export type Surface =
  | 'ledger_export'
  | 'eventing_sink'
  | 'notification'
  | 'syslog_connector'
  | 'search_connector'
  | 'chronicle_connector';

interface SurfaceSpec {
  /** how messages name the surface */
  readonly label: string;
  /** accepted tokens in the spec's order */
  readonly tokens: readonly string[];
  readonly default: string;
  readonly encoders: Readonly<Record<string, Encoder>>;
}

const spec = (label: string, dflt: string, encoders: Record<string, Encoder>): SurfaceSpec =>
  Object.freeze({ label, tokens: Object.freeze(Object.keys(encoders)), default: dflt, encoders: Object.freeze(encoders) });

/**
 * The registry. The first four rows are the spec's table verbatim; `search_connector` (ECS) and
 * `chronicle_connector` (UDM) come from the spec's formats table ("Selectable at").
 */
export const SURFACES: Readonly<Record<Surface, SurfaceSpec>> = Object.freeze({
  // Rule 1: ledger export has no raw JSON passthrough.
  ledger_export: spec('ledger export format', 'cef', {
    cef: cefEncoder,
    leef: leefEncoder,
    syslog: syslogEncoder,
    otlp: otlpEncoder,
    otlp_envelope: otlpEnvelopeEncoder,
    otlp_log_record: otlpLogRecordEncoder,
    ocsf: ocsfEncoder,
  }),
  // Rule 2: `json` on the eventing sink posts the raw captured envelope without transform.
  eventing_sink: spec('eventing sink_format', 'ocsf', {
    ocsf: ocsfEncoder,
    cef: cefEncoder,
    leef: leefEncoder,
    syslog: syslogEncoder,
    otlp: otlpEncoder,
    otlp_envelope: otlpEnvelopeEncoder,
    json: jsonEncoder,
  }),
  // Rule 2: `json` on notification connectors renders a minimal projection of displayable fields.
  notification: spec('notification connector format', 'json', {
    json: jsonProjectionEncoder,
    cef: cefEncoder,
    leef: leefEncoder,
    syslog: syslogEncoder,
    otlp: otlpEncoder,
    otlp_envelope: otlpEnvelopeEncoder,
    ocsf: ocsfEncoder,
    asim: asimEncoder,
  }),
  // syslog rule 1: the connector carries a native record or a CEF/LEEF line inside an RFC 5424 frame.
  syslog_connector: spec('syslog connector format', 'syslog', {
    syslog: syslogEncoder,
    cef: syslogCefEncoder,
    leef: syslogLeefEncoder,
  }),
  search_connector: spec('search-engine connector format', 'ecs', { ecs: ecsEncoder }),
  chronicle_connector: spec('chronicle-style connector format', 'udm', { udm: udmEncoder }),
});

/** The surface names, for validation of the surface itself. */
export const SURFACE_NAMES = Object.freeze(Object.keys(SURFACES) as Surface[]);

/** A token rejected where it is configured (HTTP 400 `bad_request`), naming the accepted tokens. */
export class FormatTokenError extends Error {
  override readonly name = 'FormatTokenError';
  readonly code = 'bad_request';
  readonly status = 400;
  constructor(readonly surface: Surface, readonly token: string, readonly accepted: readonly string[]) {
    super(`format ${JSON.stringify(token)} is not accepted for ${SURFACES[surface].label}; accepted: ${accepted.join(', ')}`);
  }
}

/** A stored token that is not (or no longer) valid for its surface, found at encode time. */
export class CorruptFormatTokenError extends Error {
  override readonly name = 'CorruptFormatTokenError';
  readonly code = 'corrupt_format';
  constructor(readonly surface: Surface, readonly token: string, readonly accepted: readonly string[]) {
    super(
      `stored ${SURFACES[surface].label} ${JSON.stringify(token)} is corrupt; refusing to encode ` +
        `(accepted: ${accepted.join(', ')}; no fall-back)`,
    );
  }
}

const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** The accepted tokens of a surface, in the spec's order. */
export function acceptedTokens(surface: Surface): readonly string[] {
  return SURFACES[surface].tokens;
}

/** The default token of a surface (spec table "Default"). */
export function defaultFormat(surface: Surface): string {
  return SURFACES[surface].default;
}

/**
 * Validates a token at authoring/configuration time (spec: rule 3). Absent (`undefined`/`null`) →
 * the surface default; anything else must be an exact accepted token (case-sensitive, no trimming).
 */
export function parseFormatToken(surface: Surface, token: string | null | undefined): string {
  if (token === undefined || token === null) return SURFACES[surface].default;
  const s = SURFACES[surface];
  if (typeof token !== 'string' || !has(s.encoders, token)) throw new FormatTokenError(surface, String(token), s.tokens);
  return token;
}

/** The encoder for a stored token; a corrupt spelling throws `CorruptFormatTokenError` (never JSON). */
export function encoderFor(surface: Surface, storedToken: string): Encoder {
  const s = SURFACES[surface];
  const enc = has(s.encoders, storedToken) ? s.encoders[storedToken] : undefined;
  if (enc === undefined) throw new CorruptFormatTokenError(surface, String(storedToken), s.tokens);
  return enc;
}
