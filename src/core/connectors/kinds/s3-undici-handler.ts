/**
 * An AWS SDK v3 request handler on the connector's undici dispatcher, so S3 traffic follows the
 * same trust rules as every HTTP kind (CA file, SPKI pin checked before a byte is written, no
 * redirects, timeouts). The SDK signs the request before it reaches here; the handler only puts it
 * on the wire. `Expect: 100-continue` is dropped (undici does not do it; SigV4 never signs it) and
 * `Transfer-Encoding` is left to undici.
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** The parts of smithy's HttpRequest the handler reads (structural, to avoid a transitive import). */
interface SdkRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query?: Record<string, string | string[] | null>;
  headers: Record<string, string>;
  body?: unknown;
}

/** RFC 3986 escaping, as SigV4 canonicalises query strings. */
function escape(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function queryString(query: SdkRequest['query']): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === null) parts.push(escape(k));
    else if (Array.isArray(v)) for (const x of v) parts.push(`${escape(k)}=${escape(x)}`);
    else parts.push(`${escape(k)}=${escape(v)}`);
  }
  return parts.join('&');
}

export class UndiciSdkHandler {
  readonly metadata = { handlerProtocol: 'http/1.1' };
  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  async handle(
    request: SdkRequest,
    options?: { abortSignal?: AbortSignal },
  ): Promise<{ response: { statusCode: number; reason?: string; headers: Record<string, string>; body: Readable } }> {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(request.headers)) {
      const lk = k.toLowerCase();
      if (lk === 'expect' || lk === 'transfer-encoding' || lk === 'connection') continue;
      headers[k] = v;
    }
    const port = request.port !== undefined ? `:${request.port}` : '';
    const qs = queryString(request.query);
    const signals = [AbortSignal.timeout(this.timeoutMs)];
    if (options?.abortSignal !== undefined) signals.push(options.abortSignal);
    const res = await this.dispatcher.request({
      origin: `${request.protocol}//${request.hostname}${port}`,
      path: `${request.path}${qs ? `?${qs}` : ''}`,
      method: request.method as Dispatcher.HttpMethod,
      headers,
      body: (request.body ?? null) as Dispatcher.DispatchOptions['body'],
      signal: AbortSignal.any(signals),
    });
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
    return { response: { statusCode: res.statusCode, headers: out, body: res.body as unknown as Readable } };
  }

  updateHttpClientConfig(): void {}
  httpHandlerConfigs(): Record<string, never> {
    return {};
  }
  destroy(): void {}
}
