/**
 * `chronicle`: UDM events (the `udm` encoder) into Google SecOps (Chronicle), built to the public
 * REST contract. Two APIs, chosen by `api`:
 *
 * - `events_import` (default): the Chronicle API method `projects.locations.instances.events.import`.
 *   `url` is the full method URL, posted verbatim, e.g.
 *   `https://chronicle.us.rep.googleapis.com/v1/projects/P/locations/us/instances/I/events:import`;
 *   body `{"inlineSource":{"events":[{"udm":{…}},…]}}`. The documented answer is an empty body on
 *   success, and "an error in one entity will cause the entire request to be rejected": a 400 fails
 *   the batch with the google.rpc.Status message.
 * - `v2_batch_create`: the legacy Ingestion API v2 `udmevents:batchCreate`; `url` e.g.
 *   `https://malachiteingestion-pa.googleapis.com/v2/udmevents:batchCreate`, body
 *   `{"customer_id":"<uuid>","events":[{…},…]}`.
 *
 * Auth: `Authorization: Bearer <token>` with the token from a secret reference, read at every
 * batch. No Google SDK and no service-account JWT exchange are built: the operator (or an
 * external refresher writing the secret) keeps a valid OAuth access token in the secret; an expired
 * one gives 401, which fails the batch and shows in health.
 * Retries: network errors, 408, 425, 429 (with `Retry-After`) and 5xx; other statuses fail.
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

export interface ChronicleConfig extends HttpEndpointConfig {
  api?: 'events_import' | 'v2_batch_create';
  customer_id?: string;
  token_secret: string;
}

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const chronicleConfigSchema = Type.Object(
  {
    ...endpointProperties('the full method URL (…/events:import or …/v2/udmevents:batchCreate), posted verbatim'),
    api: Type.Optional(Type.Union([Type.Literal('events_import'), Type.Literal('v2_batch_create')], { default: 'events_import' })),
    customer_id: Type.Optional(Type.String({ pattern: UUID, description: 'Chronicle customer id (v2_batch_create only)' })),
    token_secret: SECRET_REF,
  },
  { additionalProperties: false },
);

/** The request body of a batch. */
export function chronicleBody(items: readonly SinkItem[], c: ChronicleConfig): string {
  const events = items.map((i) => i.line);
  if ((c.api ?? 'events_import') === 'events_import') return `{"inlineSource":{"events":[${events.map((e) => `{"udm":${e}}`).join(',')}]}}`;
  return `{"customer_id":${JSON.stringify(c.customer_id ?? '')},"events":[${events.join(',')}]}`;
}

function statusMessage(body: string): string {
  try {
    const e = (JSON.parse(body) as { error?: { status?: string; message?: string } }).error;
    if (e !== undefined) return oneLine(`${e.status ?? ''} ${e.message ?? ''}`.trim(), 300);
  } catch {
    /* not a google.rpc.Status */
  }
  return oneLine(body, 200);
}

class ChronicleSink implements ConnectorSink {
  readonly #dispatcher;
  constructor(readonly c: ChronicleConfig, private readonly ctx: KindContext) {
    this.#dispatcher = openDispatcher(c, ctx.dataDir);
  }

  async send(items: readonly SinkItem[], signal: AbortSignal): Promise<SinkResult> {
    const token = await this.ctx.secret(this.c.token_secret);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': userAgent(this.ctx.version) };
    try {
      const a = await send(this.#dispatcher, this.c.url, {
        headers,
        body: chronicleBody(items, this.c),
        signal,
        timeoutMs: this.c.timeout_ms ?? 10_000,
      });
      return resultOfStatus(a, a.status >= 300 ? statusMessage(a.body) : undefined);
    } catch (err) {
      return networkFailure(err, signal);
    }
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}

export const chronicleKind: ConnectorKind<ChronicleConfig> = {
  kind: 'chronicle',
  format: { surface: 'chronicle_connector' },
  configSchema: chronicleConfigSchema,
  secretFields: ['token_secret'],
  validate(c) {
    const out = validateEndpoint(c);
    const api = c.api ?? 'events_import';
    let path = '';
    try {
      path = new URL(c.url).pathname;
    } catch {
      /* reported above */
    }
    if (api === 'events_import' && !/\/projects\/[^/]+\/locations\/[^/]+\/instances\/[^/]+\/events:import$/.test(path)) {
      out.push('url must be the events:import method URL (…/projects/P/locations/L/instances/I/events:import)');
    }
    if (api === 'v2_batch_create') {
      if (!path.endsWith('/udmevents:batchCreate')) out.push('url must end with /udmevents:batchCreate for api v2_batch_create');
      if (c.customer_id === undefined) out.push('customer_id is required for api v2_batch_create');
    } else if (c.customer_id !== undefined) out.push('customer_id applies to api v2_batch_create only');
    return out;
  },
  maxBatch: 500,
  async open(c, ctx) {
    await ctx.secret(c.token_secret);
    return new ChronicleSink(c, ctx);
  },
};
