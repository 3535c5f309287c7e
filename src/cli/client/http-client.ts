import { pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { ApiError, CliError, TransportError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { isLoopbackHost } from './settings.js';
import type { ClientSettings } from './settings.js';
import { buildTrustedConnector } from './trust.js';

/** A decoded answer: JSON when the server said so, text otherwise. */
export type ApiResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
};

/** Per-request options. */
export type RequestOptions = {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Non-2xx statuses handed back to the caller instead of raised as {@link ApiError}. */
  acceptStatuses?: readonly number[];
};

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_|ERR_OSSL_)/;

/**
 * The `svc` client's HTTPS client (undici): trust per {@link buildTrustedConnector}, bearer token,
 * tenant header, a deadline per request, JSON in and out, and the error envelope mapped to
 * {@link ApiError}. Redirects are never followed, so a token cannot be forwarded to another origin.
 */
export class HttpClient {
  readonly #settings: ClientSettings;
  readonly #agent: Agent;
  readonly #userAgent: string;

  /**
   * Refuses (exit 2, `cleartext_refused`) before any connection is opened when a credential would
   * travel over plain http to a non-loopback host without `--allow-cleartext` (spec
   * Authentication 9). Every request of this client carries the resolved credential, so the check
   * is made once, here.
   */
  constructor(settings: ClientSettings, options: { stderr: Writable; userAgent: string }) {
    const { server } = settings;
    if (server.protocol === 'http:' && settings.token !== undefined && !isLoopbackHost(server.hostname) && !settings.allowCleartext) {
      throw new CliError(
        ExitCode.Usage,
        'cleartext_refused',
        `refusing to send a credential over plain http to ${server.host}; use https, or pass --allow-cleartext if this network is trusted`,
      );
    }
    if (settings.insecure && server.protocol === 'https:') {
      options.stderr.write(`svc: warning: --insecure: the TLS certificate of ${server.host} is not verified\n`);
    }
    this.#settings = settings;
    this.#userAgent = options.userAgent;
    this.#agent = new Agent({
      connect: buildTrustedConnector(settings),
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
  }

  /** GET a JSON document. */
  async get(path: string, options: Omit<RequestOptions, 'body'> = {}): Promise<ApiResponse> {
    return this.request('GET', path, options);
  }

  /** Sends one request and decodes the answer; the whole exchange must finish within the timeout. */
  async request(method: Dispatcher.HttpMethod, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const signal = AbortSignal.timeout(this.#settings.timeoutMs);
    try {
      const response = await this.#agent.request({
        origin: this.#settings.server.origin,
        path: this.#path(path, options.query),
        method,
        headers: this.#headers(options.body !== undefined),
        body: options.body !== undefined ? JSON.stringify(options.body) : null,
        signal,
      });
      const body = await decodeBody(response);
      const status = response.statusCode;
      if ((status >= 200 && status < 300) || options.acceptStatuses?.includes(status)) {
        return { status, headers: response.headers, body };
      }
      throw withStepUpHint(apiErrorFrom(status, body), this.#settings);
    } catch (err) {
      throw this.#transportError(err, signal);
    }
  }

  /**
   * Streams a response body into `sink` with backpressure (for `audit export` and other large
   * downloads). `timeout` bounds the wait for headers and every idle gap in the body, not the
   * total, so a long export is not cut off while data keeps flowing.
   */
  async download(
    path: string,
    sink: Writable,
    options: Omit<RequestOptions, 'body' | 'acceptStatuses'> & { method?: 'GET' | 'POST' } = {},
  ): Promise<ApiResponse> {
    try {
      const response = await this.#agent.request({
        origin: this.#settings.server.origin,
        path: this.#path(path, options.query),
        method: options.method ?? 'GET',
        headers: this.#headers(false),
      });
      if (response.statusCode < 200 || response.statusCode >= 300) {
        throw apiErrorFrom(response.statusCode, await decodeBody(response));
      }
      await pipeline(response.body, sink);
      return { status: response.statusCode, headers: response.headers, body: undefined };
    } catch (err) {
      throw this.#transportError(err, undefined);
    }
  }

  /** Closes pooled connections so the process can exit. */
  async close(): Promise<void> {
    await this.#agent.close();
  }

  #path(path: string, query: RequestOptions['query']): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    // A server URL may carry a base path (behind a reverse proxy); URL keeps "/" for none.
    const base = this.#settings.server.pathname.replace(/\/+$/, '');
    return `${base}${path}${search ? `?${search}` : ''}`;
  }

  #headers(hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.#userAgent };
    if (hasBody) headers['content-type'] = 'application/json';
    if (this.#settings.token !== undefined) headers.authorization = `Bearer ${this.#settings.token}`;
    if (this.#settings.tenant !== undefined) headers['x-service-tenant'] = this.#settings.tenant;
    return headers;
  }

  #transportError(err: unknown, signal: AbortSignal | undefined): CliError {
    if (err instanceof CliError) return err;
    const host = this.#settings.server.host;
    if (signal?.aborted)
      return new TransportError('timeout', `no answer from ${host} within ${this.#settings.timeoutMs} ms`, { cause: err });
    const found = findCause(err);
    if (found instanceof CliError) return found;
    const code = found?.code ?? '';
    if (TIMEOUT_CODES.has(code))
      return new TransportError('timeout', `no answer from ${host} within ${this.#settings.timeoutMs} ms`, { cause: err });
    if (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(found?.message ?? '')) {
      return new TransportError(
        'tls_error',
        `TLS handshake with ${host} failed (${code || found?.message}); trust the server with --ca-cert or --pin-sha256`,
        { cause: err },
      );
    }
    const detail = code || found?.message || String(err);
    return new TransportError('unreachable', `cannot reach ${host}: ${detail}`, { cause: err });
  }
}

/** Builds the {@link ApiError} for a non-2xx answer from the error envelope `{error:{code,message}}`. */
export function apiErrorFrom(status: number, body: unknown): ApiError {
  const envelope = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (envelope !== undefined && typeof envelope.code === 'string' && typeof envelope.message === 'string') {
    return new ApiError(status, envelope.code, envelope.message);
  }
  const snippet = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return new ApiError(status, `http_${status}`, `server answered HTTP ${status}${snippet ? `: ${snippet}` : ''}`);
}

/**
 * A `step_up_required` refusal says where and how to step up: the `/ui/step-up` page of this very
 * server, which raises the AAL of the session whose token is pasted there, so the command works when
 * run again. WebAuthn refuses IP literals as the relying party, so a loopback IP becomes `localhost`.
 */
export function withStepUpHint(err: ApiError, settings: ClientSettings): ApiError {
  if (err.code !== 'step_up_required') return err;
  const url = new URL(settings.server.href);
  if (isLoopbackHost(url.hostname)) url.hostname = 'localhost';
  const page = `${url.origin}${url.pathname.replace(/\/+$/, '')}/ui/step-up`;
  const next = settings.token?.startsWith('svck_')
    ? `API keys cannot step up: log in with svc auth login --email <you>, step that session up at ${page}, then run the command again ` +
      `within 15 minutes`
    : `open ${page} in a browser, paste this session's token (svcs_…, the token of your saved context), press "Step up to AAL3" with ` +
      `your authenticator, then run the command again within 15 minutes`;
  return new ApiError(err.status, err.code, `${err.message.replace(/[.\s]+$/, '')}; ${next}`);
}

async function decodeBody(response: Dispatcher.ResponseData): Promise<unknown> {
  const text = await response.body.text();
  const type = String(response.headers['content-type'] ?? '');
  if (/\bjson\b/i.test(type) && text !== '') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new CliError(ExitCode.Err, 'bad_response', `the server sent invalid JSON (HTTP ${response.statusCode})`);
    }
  }
  return text;
}

/**
 * Finds the root cause in undici's `cause` chain and `AggregateError` lists (happy eyeballs tries
 * several addresses): our own {@link CliError} if the connector raised one, else the deepest error
 * carrying a `code` (e.g. `ECONNREFUSED` beneath `UND_ERR_SOCKET`).
 */
function findCause(err: unknown): (Error & { code?: string }) | undefined {
  const chain: Array<Error & { code?: string }> = [];
  let current: unknown = err;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof CliError) return current;
    chain.push(current as Error & { code?: string });
    current = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
  }
  return [...chain].reverse().find((e) => typeof e.code === 'string') ?? chain[0];
}
