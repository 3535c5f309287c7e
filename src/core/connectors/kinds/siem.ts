/**
 * `siem`: the generic HTTPS sink. One POST per batch to the configured URL (verbatim), body NDJSON
 * (one encoded item per line, `application/x-ndjson`, the default) or a JSON array
 * (`application/json`: JSON lines embedded as values, other lines as JSON strings). Any 2xx is
 * delivered; the answer's body is not read for partial success (spec: OTLP rule 2). An optional
 * auth header takes its whole value from a secret reference (e.g. `Bearer …`, `Splunk …`, `Basic …`).
 */
import Type from 'typebox';
import {
  endpointProperties,
  joinLines,
  SECRET_REF,
  networkFailure,
  oneLine,
  openDispatcher,
  resultOfStatus,
  send,
  userAgent,
  validateEndpoint,
  type HttpEndpointConfig,
} from './http-common.js';
import type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';

export interface SiemConfig extends HttpEndpointConfig {
  body?: 'ndjson' | 'json_array';
  auth_header?: string;
  auth_secret?: string;
  headers?: Record<string, string>;
}

const HEADER_NAME = '^[A-Za-z0-9!#$%&\'*+.^_`|~-]{1,100}$';
/** Headers that a config may not set: the kind owns framing, and auth goes through auth_secret. */
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'authorization',
  'proxy-authorization',
  'cookie',
  'user-agent',
]);

export const siemConfigSchema = Type.Object(
  {
    ...endpointProperties('the receiver URL, posted verbatim'),
    body: Type.Optional(Type.Union([Type.Literal('ndjson'), Type.Literal('json_array')], { default: 'ndjson' })),
    auth_header: Type.Optional(
      Type.String({ pattern: HEADER_NAME, default: 'Authorization', description: 'header that carries auth_secret' }),
    ),
    auth_secret: Type.Optional(SECRET_REF),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: HEADER_NAME }), Type.String({ maxLength: 1024, pattern: '^[^\\u0000-\\u001f\\u007f]*$' }), {
        description: 'extra non-secret headers (no authorization, cookie or framing headers)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The request body of a batch. */
export function siemBody(items: readonly SinkItem[], mode: 'ndjson' | 'json_array'): Buffer | string {
  if (mode === 'ndjson') return joinLines(items.map((i) => i.line));
  // encoders' JSON lines start with `{`; CEF/LEEF/syslog lines never do, and go as JSON strings
  return `[${items.map((i) => (i.line.startsWith('{') ? i.line : JSON.stringify(i.line))).join(',')}]`;
}

class SiemSink implements ConnectorSink {
  readonly #dispatcher;
  constructor(readonly c: SiemConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir);
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const mode = this.c.body ?? 'ndjson';
    const headers: Record<string, string> = {
      ...(this.c.headers ?? {}),
      'content-type': mode === 'ndjson' ? 'application/x-ndjson' : 'application/json',
      'user-agent': userAgent(this.ctx.version),
    };
    // read at every batch: a deleted secret throws SecretUnavailableError here (fail closed)
    if (this.c.auth_secret !== undefined)
      headers[(this.c.auth_header ?? 'Authorization').toLowerCase()] = await this.ctx.secret(this.c.auth_secret);
    try {
      const a = await send(this.#dispatcher, this.c.url, {
        headers,
        body: siemBody(items, mode),
        signal,
        timeoutMs: this.c.timeout_ms ?? 10_000,
      });
      return resultOfStatus(a, a.status >= 300 ? oneLine(a.body, 200) : undefined);
    } catch (err) {
      return networkFailure(err, signal);
    }
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

export const siemKind: ConnectorKind<SiemConfig> = {
  kind: 'siem',
  format: { surface: 'notification' },
  configSchema: siemConfigSchema,
  secretFields: ['auth_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    for (const h of Object.keys(c.headers ?? {})) {
      if (RESERVED.has(h.toLowerCase())) out.push(`headers may not set ${h} (the kind sets it; credentials go in auth_secret)`);
    }
    if (c.auth_header !== undefined && c.auth_secret === undefined) out.push('auth_header needs auth_secret');
    return out;
  },
  maxBatch: 500,
  async open(c, ctx) {
    if (c.auth_secret !== undefined) await ctx.secret(c.auth_secret); // fail closed at open too
    return new SiemSink(c, ctx);
  },
};
