/**
 * `splunkhec`: Splunk HTTP Event Collector. `Authorization: Splunk <token>` (the token is a secret
 * reference), every request carries `X-Splunk-Request-Channel` (a GUID per open sink, or the
 * configured one).
 *
 * - `endpoint: event` (default): POST `<url>/services/collector/event`, the body the batch's event
 *   objects one per line (HEC accepts concatenated JSON objects). Each item becomes
 *   `{time, host?, source?, sourcetype?, index?, event}`: `time` is the item's RFC 3339 time as epoch
 *   seconds with milliseconds (absent when the item has none: HEC then stamps arrival time), `event`
 *   the item's JSON document when the line is JSON, else the line as a string.
 * - `endpoint: raw`: POST `<url>/services/collector/raw?host=&source=&sourcetype=&index=`, the body the
 *   lines separated by LF (HEC breaks raw data into events at line breaks by default).
 *
 * The answer is `{"text","code"[,"ackId"][,"invalid-event-number"]}`. `code` 0 is success; a
 * non-zero code is a rejection: codes 8 (internal error), 9 (server busy), 18–20 (unhealthy) and
 * HTTP 429/5xx retry; any other code fails the batch (token disabled/invalid, incorrect index, no
 * channel…), except that an event-data error (codes 6, 12, 13, 15) naming `invalid-event-number`
 * n rejects item n alone: HEC indexed the n events before it and stopped, so the items after it
 * are posted again in a new request.
 *
 * Indexer acknowledgement (`ack.enabled`): every successful request returns an `ackId`; the kind
 * polls `POST <url>/services/collector/ack` with `{"acks":[…]}` on the same channel until every id
 * reads `true`, up to `ack.timeout_ms`; an id still unconfirmed then makes the batch retry (at
 * least once: the receiver may see those events twice). An answer without `ackId` while
 * acknowledgement is asked for (the token has it off) fails the batch.
 */
import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import {
  endpointProperties,
  joinLines,
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

export interface SplunkHecConfig extends HttpEndpointConfig {
  token_secret: string;
  endpoint?: 'event' | 'raw';
  host?: string;
  source?: string;
  sourcetype?: string;
  index?: string;
  channel?: string;
  ack?: { enabled?: boolean; timeout_ms?: number; poll_ms?: number };
}

const META = Type.String({ minLength: 1, maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });

export const splunkHecConfigSchema = Type.Object(
  {
    ...endpointProperties('the HEC base URL (scheme, host, port), e.g. https://splunk:8088; the kind appends /services/collector/…'),
    token_secret: SECRET_REF,
    endpoint: Type.Optional(Type.Union([Type.Literal('event'), Type.Literal('raw')], { default: 'event' })),
    host: Type.Optional(META),
    source: Type.Optional(META),
    sourcetype: Type.Optional(META),
    index: Type.Optional(META),
    channel: Type.Optional(
      Type.String({ format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' }),
    ),
    ack: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean({ default: false })),
          timeout_ms: Type.Optional(Type.Integer({ minimum: 1000, maximum: 600_000, default: 60_000 })),
          poll_ms: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** HEC codes that mean "try again later" (documented: internal error, busy, unhealthy). */
const RETRY_CODES = new Set([8, 9, 18, 19, 20]);
/** HEC codes about one event's data, which may name `invalid-event-number`. */
const EVENT_DATA_CODES = new Set([6, 12, 13, 15]);

/** Epoch seconds with millisecond precision of an RFC 3339 time; undefined when absent or unreadable. */
export function hecTime(time: string | undefined): number | undefined {
  if (time === undefined) return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : Math.floor(ms) / 1000;
}

/** The HEC event object of one item (parsed form; the sink writes the same object as text). */
export function hecEvent(item: SinkItem, c: SplunkHecConfig): Record<string, unknown> {
  return JSON.parse(hecEventText(item, hecMetaPrefix(c))) as Record<string, unknown>;
}

/** `"host":…,"source":…,"sourcetype":…,"index":…,` of the config, built once per sink. */
export function hecMetaPrefix(c: SplunkHecConfig): string {
  let out = '';
  for (const k of ['host', 'source', 'sourcetype', 'index'] as const)
    if (c[k] !== undefined) out += `${JSON.stringify(k)}:${JSON.stringify(c[k])},`;
  return out;
}

/**
 * One event object as text: `{"time":…,<meta>"event":…}`. A JSON line (a JSON format's encoding,
 * which always starts with `{`) is embedded verbatim as the event object; any other line is a JSON
 * string. Built as text so a batch is not parsed and re-serialised.
 */
export function hecEventText(item: SinkItem, metaPrefix: string): string {
  const t = hecTime(item.time);
  const event = item.line.startsWith('{') ? item.line : JSON.stringify(item.line);
  return `{${t !== undefined ? `"time":${t},` : ''}${metaPrefix}"event":${event}}`;
}

interface HecAnswer {
  text?: string;
  code?: number;
  ackId?: number;
  'invalid-event-number'?: number;
}

function parseHec(body: string): HecAnswer | undefined {
  try {
    const v = JSON.parse(body) as unknown;
    return v !== null && typeof v === 'object' ? (v as HecAnswer) : undefined;
  } catch {
    return undefined;
  }
}

class SplunkHecSink implements ConnectorSink {
  readonly #dispatcher;
  readonly #channel: string;
  readonly #base: string;
  readonly #meta: string;
  constructor(readonly c: SplunkHecConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir);
    this.#meta = hecMetaPrefix(c);
    this.#channel = c.channel ?? randomUUID();
    this.#base = c.url.replace(/\/+$/, '');
  }

  #url(): string {
    if ((this.c.endpoint ?? 'event') === 'event') return `${this.#base}/services/collector/event`;
    const q = new URLSearchParams();
    for (const k of ['host', 'source', 'sourcetype', 'index'] as const) if (this.c[k] !== undefined) q.set(k, this.c[k] as string);
    const qs = q.toString();
    return `${this.#base}/services/collector/raw${qs ? `?${qs}` : ''}`;
  }

  #body(items: readonly SinkItem[]): Buffer {
    if ((this.c.endpoint ?? 'event') === 'raw') return joinLines(items.map((i) => i.line), '\n', false);
    return joinLines(items.map((i) => hecEventText(i, this.#meta)), '\n', false);
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const token = await this.ctx.secret(this.c.token_secret); // fail closed when the secret is gone
    const headers = {
      authorization: `Splunk ${token}`,
      'x-splunk-request-channel': this.#channel,
      'content-type': (this.c.endpoint ?? 'event') === 'event' ? 'application/json' : 'text/plain; charset=utf-8',
      'user-agent': userAgent(this.ctx.version),
    };
    const timeoutMs = this.c.timeout_ms ?? 10_000;
    const rejected: NonNullable<SinkResult['rejected']> = [];
    const acks: number[] = [];
    let start = 0;
    let status: number | undefined;
    while (start < items.length) {
      let a: HttpAnswer;
      try {
        a = await send(this.#dispatcher, this.#url(), { headers, body: this.#body(items.slice(start)), signal, timeoutMs });
      } catch (err) {
        return networkFailure(err, signal);
      }
      status = a.status;
      const hec = parseHec(a.body);
      const code = typeof hec?.code === 'number' ? hec.code : undefined;
      const text = oneLine(typeof hec?.text === 'string' ? hec.text : a.body, 200);
      if (a.status >= 200 && a.status < 300 && (code === 0 || code === undefined)) {
        if (this.c.ack?.enabled === true) {
          // asked for acknowledgement and got none: the token has it off; never claim indexed
          if (typeof hec?.ackId !== 'number')
            return {
              result: 'failed',
              status: a.status,
              error: 'ack.enabled is set but HEC returned no ackId (indexer acknowledgement is off for this token)',
            };
          acks.push(hec.ackId);
        }
        break;
      }
      const bad = hec?.['invalid-event-number'];
      if (code !== undefined && EVENT_DATA_CODES.has(code) && typeof bad === 'number' && bad >= 0 && start + bad < items.length) {
        // HEC indexed the events before `bad` and stopped at it: reject it, post the rest again
        rejected.push({ index: start + bad, error: `HEC code ${code}: ${text}` });
        start += bad + 1;
        continue;
      }
      const what = code === undefined ? `receiver answered ${a.status}: ${text}` : `HEC code ${code} (HTTP ${a.status}): ${text}`;
      const retryAfterMs = parseRetryAfter(a.headers['retry-after']);
      if ((code !== undefined && RETRY_CODES.has(code)) || a.status === 429 || a.status === 408 || a.status >= 500) {
        return { result: 'retry', status: a.status, error: what, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
      }
      return { result: 'failed', status: a.status, error: what };
    }
    if (this.c.ack?.enabled === true && acks.length > 0) {
      const pending = await this.#waitAcks(acks, headers, signal);
      if (pending !== null) return pending;
    }
    return { result: 'delivered', ...(status !== undefined ? { status } : {}), ...(rejected.length > 0 ? { rejected } : {}) };
  }

  /** Poll /services/collector/ack until every id is true; null when confirmed, a retry result otherwise. */
  async #waitAcks(ids: number[], headers: Record<string, string>, signal: AbortSignal): Promise<SinkResult | null> {
    const deadline = Date.now() + (this.c.ack?.timeout_ms ?? 60_000);
    const poll = this.c.ack?.poll_ms ?? 1000;
    let open = [...ids];
    const url = `${this.#base}/services/collector/ack`;
    while (open.length > 0) {
      let a: HttpAnswer;
      try {
        a = await send(this.#dispatcher, url, {
          headers: { ...headers, 'content-type': 'application/json' },
          body: JSON.stringify({ acks: open }),
          signal,
          timeoutMs: this.c.timeout_ms ?? 10_000,
        });
      } catch (err) {
        return networkFailure(err, signal);
      }
      if (a.status < 200 || a.status >= 300) {
        const hec = parseHec(a.body);
        return {
          result: 'retry',
          status: a.status,
          error:
            `indexer acknowledgement failed: HTTP ${a.status}${hec?.code !== undefined ? ` code ${hec.code}` : ''}: ` +
            `${oneLine(hec?.text ?? a.body, 200)}`,
        };
      }
      const state = (parseHec(a.body) as { acks?: Record<string, boolean> } | undefined)?.acks ?? {};
      open = open.filter((id) => state[String(id)] !== true);
      if (open.length === 0) return null;
      if (Date.now() + poll > deadline) {
        return {
          result: 'retry',
          status: a.status,
          error: `indexer acknowledgement: ${open.length} of ${ids.length} requests not confirmed within ack.timeout_ms`,
        };
      }
      await new Promise<void>((r) => setTimeout(r, poll));
      if (signal.aborted) return { result: 'retry', error: 'aborted by the runtime' };
    }
    return null;
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

export const splunkHecKind: ConnectorKind<SplunkHecConfig> = {
  kind: 'splunkhec',
  format: { surface: 'notification' },
  configSchema: splunkHecConfigSchema,
  secretFields: ['token_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    try {
      const u = new URL(c.url);
      if (u.search !== '') out.push('url must not have a query (the kind builds /services/collector/… itself)');
      if (/\/services\/collector/.test(u.pathname))
        out.push('url is the HEC base URL (scheme, host, port); the kind appends /services/collector/event, /raw and /ack');
    } catch {
      /* reported by validateEndpoint */
    }
    return out;
  },
  maxBatch: 500,
  async open(c, ctx) {
    await ctx.secret(c.token_secret);
    return new SplunkHecSink(c, ctx);
  },
};
