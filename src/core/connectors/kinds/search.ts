/**
 * `search`: ECS 9.4.0 documents (the `ecs` encoder) into Elasticsearch or OpenSearch through the
 * `_bulk` API. One POST `<url>/_bulk` per batch, `Content-Type: application/x-ndjson`, an action
 * line and a document line per item, the body ending in LF:
 *   {"index":{"_index":"svc-audit-2026.11.27","_id":"<item id>"}}
 *   {…ECS document…}
 * `_id` is the item's stable id (`<tenant>:<seq>` for ledger records), so a re-sent batch overwrites
 * rather than duplicates; `op_type: create` (data streams) makes a re-sent document a 409
 * `version_conflict_engine_exception`, which counts as delivered (it is there already).
 * The index name may hold `%{yyyy}`, `%{MM}`, `%{dd}` (or `%{yyyy.MM.dd}`), filled from the item's
 * time in UTC (`undated` parts when it has none).
 *
 * The answer: HTTP 429/5xx (and network errors) retry the batch; other non-2xx fail it; a 200 with
 * `errors: true` is read item by item (`items[i].index|create.status/error`): an item with 429 or
 * 5xx makes the whole batch retry (safe: `_id` makes it idempotent), any other item error is a
 * `rejected` entry with the error's `type: reason`.
 */
import Type from 'typebox';
import {
  endpointProperties,
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

export interface SearchConfig extends HttpEndpointConfig {
  index?: string;
  op_type?: 'index' | 'create';
  api_key_secret?: string;
  username?: string;
  password_secret?: string;
  pipeline?: string;
}

export const searchConfigSchema = Type.Object(
  {
    ...endpointProperties('the cluster URL, e.g. https://es.internal:9200; the kind posts to <url>/_bulk'),
    index: Type.Optional(
      Type.String({
        pattern: '^[a-z0-9%][a-z0-9._%{}yMd+-]{0,200}$',
        default: 'svc-%{yyyy.MM.dd}',
        description: 'index or data stream name; %{yyyy} %{MM} %{dd} %{yyyy.MM.dd} from the item time (UTC)',
      }),
    ),
    op_type: Type.Optional(Type.Union([Type.Literal('index'), Type.Literal('create')], { default: 'index' })),
    api_key_secret: Type.Optional(SECRET_REF),
    username: Type.Optional(Type.String({ pattern: '^[^:\\u0000-\\u001f\\u007f]{1,256}$' })),
    password_secret: Type.Optional(SECRET_REF),
    pipeline: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,200}$' })),
  },
  { additionalProperties: false },
);

/** The index name for one item (date tokens from its time, UTC). */
export function indexName(pattern: string, time: string | undefined): string {
  const t = time === undefined ? Number.NaN : Date.parse(time);
  const d = Number.isNaN(t) ? undefined : new Date(t).toISOString();
  const y = d?.slice(0, 4) ?? 'undated';
  const m = d?.slice(5, 7) ?? 'undated';
  const day = d?.slice(8, 10) ?? 'undated';
  return pattern
    .replaceAll('%{yyyy.MM.dd}', d ? `${y}.${m}.${day}` : 'undated')
    .replaceAll('%{yyyy}', y)
    .replaceAll('%{MM}', m)
    .replaceAll('%{dd}', day);
}

/** The `_bulk` body of a batch. */
export function bulkBody(items: readonly SinkItem[], c: SearchConfig): string {
  const op = c.op_type ?? 'index';
  const pattern = c.index ?? 'svc-%{yyyy.MM.dd}';
  let out = '';
  for (const i of items) out += `${JSON.stringify({ [op]: { _index: indexName(pattern, i.time), _id: i.id } })}\n${i.line}\n`;
  return out;
}

interface BulkItem {
  status?: number;
  error?: { type?: string; reason?: string } | string;
}

/** Read a 2xx `_bulk` answer into the batch result. */
export function readBulk(body: string, count: number, status: number): SinkResult {
  let r: { errors?: boolean; items?: Array<Record<string, BulkItem>> };
  try {
    r = JSON.parse(body) as typeof r;
  } catch {
    return { result: 'retry', status, error: 'the _bulk answer is not JSON; the batch is sent again' };
  }
  if (r.errors !== true) return { result: 'delivered', status };
  const items = r.items ?? [];
  if (items.length !== count)
    return { result: 'retry', status, error: `the _bulk answer has ${items.length} items for ${count} documents` };
  const rejected: NonNullable<SinkResult['rejected']> = [];
  for (let i = 0; i < items.length; i++) {
    const entry = Object.values(items[i] ?? {})[0];
    if (entry === undefined || entry.error === undefined) continue;
    const s = entry.status ?? 0;
    const e = typeof entry.error === 'string' ? { type: 'error', reason: entry.error } : entry.error;
    if (s === 409 && e.type === 'version_conflict_engine_exception') continue; // op_type create: already indexed
    if (s === 429 || s >= 500)
      return { result: 'retry', status: s, error: `document ${i}: ${s} ${e.type ?? ''}: ${oneLine(e.reason ?? '', 200)}` };
    rejected.push({ index: i, error: `${s} ${e.type ?? 'error'}: ${oneLine(e.reason ?? '', 300)}` });
  }
  return { result: 'delivered', status, ...(rejected.length > 0 ? { rejected } : {}) };
}

class SearchSink implements ConnectorSink {
  readonly #dispatcher;
  readonly #url: string;
  constructor(readonly c: SearchConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir);
    const base = c.url.replace(/\/+$/, '');
    this.#url = `${base}/_bulk${c.pipeline !== undefined ? `?pipeline=${encodeURIComponent(c.pipeline)}` : ''}`;
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const headers: Record<string, string> = { 'content-type': 'application/x-ndjson', 'user-agent': userAgent(this.ctx.version) };
    if (this.c.api_key_secret !== undefined) headers['authorization'] = `ApiKey ${await this.ctx.secret(this.c.api_key_secret)}`;
    else if (this.c.password_secret !== undefined) {
      const password = await this.ctx.secret(this.c.password_secret);
      headers['authorization'] = `Basic ${Buffer.from(`${this.c.username ?? ''}:${password}`, 'utf8').toString('base64')}`;
    }
    try {
      const a = await send(this.#dispatcher, this.#url, {
        headers,
        body: bulkBody(items, this.c),
        signal,
        timeoutMs: this.c.timeout_ms ?? 10_000,
      });
      if (a.status >= 200 && a.status < 300) return readBulk(a.body, items.length, a.status);
      return resultOfStatus(a, errorDetail(a.body));
    } catch (err) {
      return networkFailure(err, signal);
    }
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

function errorDetail(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { type?: string; reason?: string } | string }).error;
    if (typeof e === 'string') return oneLine(e, 200);
    if (e !== undefined) return oneLine(`${e.type ?? ''}: ${e.reason ?? ''}`, 200);
  } catch {
    /* plain text */
  }
  return oneLine(body, 200);
}

export const searchKind: ConnectorKind<SearchConfig> = {
  kind: 'search',
  format: { surface: 'search_connector' },
  configSchema: searchConfigSchema,
  secretFields: ['api_key_secret', 'password_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    if (c.api_key_secret !== undefined && c.password_secret !== undefined)
      out.push('set api_key_secret or username/password_secret, not both');
    if ((c.username === undefined) !== (c.password_secret === undefined)) out.push('username and password_secret go together');
    try {
      if (new URL(c.url).search !== '') out.push('url must not have a query (the kind posts to <url>/_bulk)');
    } catch {
      /* reported above */
    }
    return out;
  },
  maxBatch: 1000,
  async open(c, ctx) {
    if (c.api_key_secret !== undefined) await ctx.secret(c.api_key_secret);
    if (c.password_secret !== undefined) await ctx.secret(c.password_secret);
    return new SearchSink(c, ctx);
  },
};
