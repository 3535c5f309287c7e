/**
 * `otlp`: the OTLP/HTTP JSON logs connector (spec: OTLP rule 2). Items are the `otlp` encoder's
 * lines (each a complete ExportLogsServiceRequest, OTLP rule 1, with resource identity and scope);
 * the kind merges a batch into ONE ExportLogsServiceRequest (records grouped under their resource
 * and scope, in batch order) and posts it to the configured logs URL verbatim (no `/v1/logs`
 * appended), `Content-Type: application/json`.
 *
 * The answer (OTLP/HTTP spec, "Responses"): 2xx with an ExportLogsServiceResponse. A
 * `partialSuccess.rejectedLogRecords` > 0 means that many records were refused and must not be
 * retried: they become `rejected` entries carrying the server's `errorMessage`. OTLP says how
 * many, not which: when the count is below the number of records of the request, every record of
 * that request is reported (the message says "N of M"), so nothing refused counts as delivered;
 * `records_per_request: 1` makes the attribution exact. Retryable statuses per the OTLP spec:
 * 429, 502, 503, 504 (with `Retry-After`), and network errors; any other status fails the batch
 * with the google.rpc.Status `message` of the body when there is one.
 */
import Type from 'typebox';
import {
  endpointProperties,
  SECRET_REF,
  networkFailure,
  oneLine,
  openDispatcher,
  parseRetryAfter,
  send,
  userAgent,
  validateEndpoint,
  type HttpAnswer,
  type HttpEndpointConfig,
} from './http-common.js';
import type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';

export interface OtlpConfig extends HttpEndpointConfig {
  records_per_request?: number;
  auth_header?: string;
  auth_secret?: string;
}

export const otlpConfigSchema = Type.Object(
  {
    ...endpointProperties('the collector logs URL, posted verbatim (e.g. https://collector:4318/v1/logs)'),
    records_per_request: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        default: 1000,
        description: 'log records per export request; 1 attributes partial-success rejections exactly',
      }),
    ),
    auth_header: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$", default: 'Authorization' })),
    auth_secret: Type.Optional(SECRET_REF),
  },
  { additionalProperties: false },
);

interface Group {
  resource: unknown;
  scopes: Map<string, { scope: unknown; logRecords: unknown[] }>;
}

/** Merge items (each a complete export request) into one request; throws on a line that is not one. */
export function mergeExportRequests(items: readonly SinkItem[]): { body: string; records: number } {
  const groups = new Map<string, Group>();
  let records = 0;
  for (const item of items) {
    const req = JSON.parse(item.line) as {
      resourceLogs?: Array<{ resource?: unknown; scopeLogs?: Array<{ scope?: unknown; logRecords?: unknown[] }> }>;
    };
    if (!Array.isArray(req.resourceLogs)) throw new Error(`item ${item.id} is not an OTLP export-logs request (no resourceLogs)`);
    for (const rl of req.resourceLogs) {
      const rk = JSON.stringify(rl.resource ?? {});
      let g = groups.get(rk);
      if (g === undefined) groups.set(rk, (g = { resource: rl.resource ?? {}, scopes: new Map() }));
      for (const sl of rl.scopeLogs ?? []) {
        const sk = JSON.stringify(sl.scope ?? {});
        let s = g.scopes.get(sk);
        if (s === undefined) g.scopes.set(sk, (s = { scope: sl.scope ?? {}, logRecords: [] }));
        for (const r of sl.logRecords ?? []) {
          s.logRecords.push(r);
          records++;
        }
      }
    }
  }
  const resourceLogs = [...groups.values()].map((g) => ({ resource: g.resource, scopeLogs: [...g.scopes.values()] }));
  return { body: JSON.stringify({ resourceLogs }), records };
}

function statusMessage(body: string): string {
  try {
    const s = JSON.parse(body) as { message?: unknown };
    if (typeof s.message === 'string') return oneLine(s.message, 300);
  } catch {
    /* not a google.rpc.Status: show the text */
  }
  return oneLine(body, 200);
}

/** Read one answer for a request of `count` items starting at batch index `offset`. */
export function readOtlpAnswer(a: HttpAnswer, offset: number, count: number, records: number): SinkResult {
  if (a.status >= 200 && a.status < 300) {
    let rejectedCount = 0;
    let message = '';
    if (a.body.trim() !== '') {
      try {
        const r = JSON.parse(a.body) as { partialSuccess?: { rejectedLogRecords?: string | number; errorMessage?: string } };
        rejectedCount = Number(r.partialSuccess?.rejectedLogRecords ?? 0);
        message = typeof r.partialSuccess?.errorMessage === 'string' ? oneLine(r.partialSuccess.errorMessage, 300) : '';
      } catch {
        // an unreadable 2xx body: the records were accepted (the spec says the body is a response message)
      }
    }
    if (!(rejectedCount > 0)) return { result: 'delivered', status: a.status };
    const what =
      rejectedCount >= records
        ? records === 1
          ? 'the receiver rejected the record'
          : `the receiver rejected all ${records} log records of this request`
        : `the receiver rejected ${rejectedCount} of ${records} log records of this request (OTLP does not say which)`;
    const error = message === '' ? what : `${what}: ${message}`;
    return { result: 'delivered', status: a.status, rejected: Array.from({ length: count }, (_, i) => ({ index: offset + i, error })) };
  }
  const detail = statusMessage(a.body);
  const retryAfterMs = parseRetryAfter(a.headers['retry-after']);
  if ([429, 502, 503, 504].includes(a.status)) {
    return {
      result: 'retry',
      status: a.status,
      error: `receiver answered ${a.status}${detail ? `: ${detail}` : ''}`,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  }
  return { result: 'failed', status: a.status, error: `receiver answered ${a.status}${detail ? `: ${detail}` : ''}` };
}

class OtlpSink implements ConnectorSink {
  readonly #dispatcher;
  constructor(readonly c: OtlpConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir);
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': userAgent(this.ctx.version) };
    if (this.c.auth_secret !== undefined)
      headers[(this.c.auth_header ?? 'Authorization').toLowerCase()] = await this.ctx.secret(this.c.auth_secret);
    const per = this.c.records_per_request ?? 1000;
    const rejected: NonNullable<SinkResult['rejected']> = [];
    let status: number | undefined;
    for (let offset = 0; offset < items.length; offset += per) {
      const chunk = items.slice(offset, offset + per);
      let merged;
      try {
        merged = mergeExportRequests(chunk);
      } catch (err) {
        return { result: 'failed', error: (err as Error).message };
      }
      let r: SinkResult;
      try {
        const a = await send(this.#dispatcher, this.c.url, { headers, body: merged.body, signal, timeoutMs: this.c.timeout_ms ?? 10_000 });
        r = readOtlpAnswer(a, offset, chunk.length, merged.records);
      } catch (err) {
        r = networkFailure(err, signal);
      }
      // a later request failing makes the whole batch retry: earlier requests arrive twice at most (at-least-once)
      if (r.result !== 'delivered') return r;
      status = r.status;
      if (r.rejected) rejected.push(...r.rejected);
    }
    return { result: 'delivered', ...(status !== undefined ? { status } : {}), ...(rejected.length > 0 ? { rejected } : {}) };
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

export const otlpKind: ConnectorKind<OtlpConfig> = {
  kind: 'otlp',
  // each item is the `otlp` encoder's line (a complete export request); the kind merges a batch
  format: { fixed: 'otlp' },
  configSchema: otlpConfigSchema,
  secretFields: ['auth_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    if (c.auth_header !== undefined && c.auth_secret === undefined) out.push('auth_header needs auth_secret');
    return out;
  },
  maxBatch: 1000,
  async open(c, ctx) {
    if (c.auth_secret !== undefined) await ctx.secret(c.auth_secret);
    return new OtlpSink(c, ctx);
  },
};
