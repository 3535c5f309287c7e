/**
 * The only file that touches uWebSockets.js: sockets in, `App.handle` in the middle, bytes out.
 * Body limits are enforced while reading (413 before the whole body arrives), aborted requests
 * are never written to (uWS invalidates `res` after `onAborted`), and streams honour backpressure
 * through `onWritable`.
 */
import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import type { HttpResponse as UwsResponse, HttpRequest as UwsRequest, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { REQUEST_ID, type App, type HttpResponse } from './app.js';
import { ApiError, errors } from '../contract/errors.js';
import { securityHeaders } from './headers.js';
import { statusLine } from './status-text.js';

const require = createRequire(import.meta.url);

import type { HttpEngine, HttpObserver } from './engine.js';
export type { HttpEngine, HttpObserver } from './engine.js';

type UwsModule = typeof import('uWebSockets.js');
let loaded: { uws: UwsModule; engine: HttpEngine } | undefined;

/**
 * Load uWS once and tell which engine runs. The package falls back to a slow pure-Node engine
 * when its native binary fails to load (ARCHITECTURE.md "HTTP"); only the native one has SSLApp.
 */
export function loadUws(): { uws: UwsModule; engine: HttpEngine } {
  if (!loaded) {
    const uws = require('uWebSockets.js') as UwsModule;
    loaded = { uws, engine: typeof (uws as { SSLApp?: unknown }).SSLApp === 'function' ? 'uws-native' : 'uws-fallback' };
  }
  return loaded;
}

/** Per-request events for access logs and metrics. */
export interface ListenOptions {
  host: string;
  port: number;
  tls?: { certFile: string; keyFile: string };
  observer?: HttpObserver;
  /**
   * Longest silence while a request body is still arriving before the answer is 408
   * `request_timeout` (default {@link DEFAULT_BODY_TIMEOUT_MS}). uWS closes a socket idle for
   * about 10–14 s without a word, which the access log could only call `499 aborted`; this timer
   * answers first.
   */
  bodyTimeoutMs?: number;
}

import { DEFAULT_BODY_TIMEOUT_MS } from './engine.js';
export { DEFAULT_BODY_TIMEOUT_MS } from './engine.js';

export interface RunningHttp {
  port: number;
  engine: HttpEngine;
  /** stop accepting, wait for in-flight requests (bounded), then resolve */
  close(drainMs?: number): Promise<void>;
  inFlight(): number;
}

/** uWS `ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT`: listen without SO_REUSEPORT. */
const LISTEN_EXCLUSIVE_PORT = 1;

/** Serve `app` on a uWS listener. Rejects when the port cannot be bound (in use by any process, whatever its bind address). */
export function listenHttp(app: App, opts: ListenOptions): Promise<RunningHttp> {
  const { uws, engine } = loadUws();
  if (opts.tls && engine !== 'uws-native') {
    return Promise.reject(
      new Error(
        'TLS needs the native uWebSockets.js engine, which did not load on this platform ' +
          '(the package fell back to its pure-Node engine); fix the install, or use --insecure on a loopback bind',
      ),
    );
  }
  const server = createServer(uws, opts.tls);
  const ctx: ServerContext = {
    tls: Boolean(opts.tls),
    observer: opts.observer,
    bodyTimeoutMs: opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    requests: new InFlight(),
  };
  server.any('/*', (res: UwsResponse, req: UwsRequest) => handleRequest(app, ctx, res, req));
  return listenExclusive(uws, engine, server, opts.host, opts.port, ctx.requests);
}

/** A plain or TLS uWS app (TLS needs the native engine, checked by the caller). */
function createServer(uws: UwsModule, tls: ListenOptions['tls']): TemplatedApp {
  return tls ? uws.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile }) : uws.App();
}

/** Bind `server` to host:port alone and hand back its handle; `close` stops accepting and drains {@link InFlight}. */
function listenExclusive(
  uws: UwsModule,
  engine: HttpEngine,
  server: TemplatedApp,
  host: string,
  port: number,
  requests: InFlight,
): Promise<RunningHttp> {
  return new Promise((resolve, reject) => {
    // LIBUS_LISTEN_EXCLUSIVE_PORT: without it uWS sets SO_REUSEPORT, and Linux lets a second process
    // of the same user listen on the same port and take half of the connections (issue 30 item 1).
    // A port in use must be a startup failure instead.
    type Listen = (host: string, port: number, options: number, cb: (token: us_listen_socket | false) => void) => TemplatedApp;
    const listen = server.listen.bind(server) as unknown as Listen;
    listen(host, port, LISTEN_EXCLUSIVE_PORT, (token: us_listen_socket | false) => {
      if (!token) return reject(new Error(`cannot listen on ${formatHostPort(host, port)} (address in use or not available)`));
      const bound = uws.us_socket_local_port(token as unknown as Parameters<UwsModule['us_socket_local_port']>[0]);
      resolve({
        port: bound,
        engine,
        inFlight: () => requests.count,
        close: (drainMs = 10_000) => {
          requests.draining = true;
          uws.us_listen_socket_close(token);
          return requests.drain(drainMs);
        },
      });
    });
  });
}

/** Requests in flight, and the wait of `close` for the last of them. */
class InFlight {
  count = 0;
  /** set by `close`: whole answers then close their connection */
  draining = false;
  private drained: (() => void) | undefined;

  started(): void {
    this.count++;
  }

  /** One request is done; `report` runs between the count going down and the drain's wake-up. */
  finished(report: () => void): void {
    this.count--;
    report();
    if (this.draining && this.count === 0) this.drained?.();
  }

  /** Resolves when no request is in flight, or after `drainMs` at the latest. */
  drain(drainMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise<void>((r) => {
      const t = setTimeout(r, drainMs);
      this.drained = () => {
        clearTimeout(t);
        r();
      };
    });
  }
}

/** What every request handler of one listener shares. */
interface ServerContext {
  tls: boolean;
  observer: HttpObserver | undefined;
  bodyTimeoutMs: number;
  requests: InFlight;
}

/** The parts of a uWS request kept past the handler's first await. */
interface RequestHead {
  started: number;
  method: string;
  rawUrl: string;
  query: string;
  headers: Record<string, string>;
  remoteAddress: string;
}

/** Everything from `req` must be read at once: it is stack-allocated and dies at the first await. */
function readRequestHead(res: UwsResponse, req: UwsRequest): RequestHead {
  const started = performance.now();
  const method = req.getMethod().toUpperCase();
  const rawUrl = req.getUrl();
  const query = readQuery(req);
  const headers: Record<string, string> = {};
  req.forEach((k, v) => {
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  });
  const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString();
  return { started, method, rawUrl, query, headers, remoteAddress };
}

/** One request from its head to its answer: route, read the body, run `app`, write the answer. */
function handleRequest(app: App, ctx: ServerContext, res: UwsResponse, req: UwsRequest): void {
  const head = readRequestHead(res, req);
  const exchange = new Exchange(res, head, ctx);
  const { method, query, headers, remoteAddress } = head;
  const path = normalisePath(head.rawUrl);
  const prepared = path === undefined ? undefined : app.prepare(method, path);
  if (path === undefined || prepared === undefined) return exchange.fail(errors.badRequest('malformed request path'));
  const dispatch = (body: Buffer) => {
    exchange.receiving = undefined;
    exchange.stopBodyTimer();
    const onClientAbort = (cb: () => void) => (exchange.aborted ? cb() : (exchange.onClientAbort = cb));
    app
      .handle({ method, path, query, headers, body, remoteAddress, onClientAbort }, prepared)
      .then((out) => exchange.write(out))
      .catch((err: unknown) => exchange.fail(err instanceof ApiError ? err : errors.internal()));
  };
  readBody(res, exchange, headers, prepared.bodyLimit, prepared.route?.spec.path, ctx.bodyTimeoutMs, dispatch);
}

/**
 * One request's life on its response: the client going away, the in-flight count and the
 * observer's event, the body timer, and the answer (whole, streamed, or an error envelope).
 */
class Exchange {
  aborted = false;
  /** the app's hook for a client that goes away */
  onClientAbort: (() => void) | undefined;
  // uWS keeps one onAborted handler per response: every waiter hangs off this one.
  readonly stream: StreamState = { aborted: () => this.aborted, waiters: new Set() };
  // Set while the request's body is still arriving (nothing answers yet): a client that goes
  // away then is recorded here, or it would never leave the in-flight count.
  receiving: string | undefined;
  // Armed while a body arrives, pushed back by every chunk (see ListenOptions.bodyTimeoutMs).
  private bodyTimer: NodeJS.Timeout | undefined;
  private bytesOut = 0;

  constructor(
    private readonly res: UwsResponse,
    private readonly head: RequestHead,
    private readonly ctx: ServerContext,
  ) {
    res.onAborted(() => this.clientGone());
    ctx.requests.started();
    ctx.observer?.started();
  }

  awaitBody(onTimeout: () => void): void {
    if (this.bodyTimer === undefined) this.bodyTimer = setTimeout(onTimeout, this.ctx.bodyTimeoutMs);
    else this.bodyTimer.refresh();
  }

  stopBodyTimer(): void {
    if (this.bodyTimer !== undefined) clearTimeout(this.bodyTimer);
  }

  private clientGone(): void {
    this.aborted = true;
    this.stopBodyTimer();
    this.onClientAbort?.();
    for (const w of this.stream.waiters) w();
    this.stream.waiters.clear();
    if (this.receiving !== undefined) {
      const route = this.receiving;
      this.receiving = undefined;
      this.done(CLIENT_CLOSED, route, requestIdOf(this.head.headers));
    }
  }

  private done(status: number, route: string, requestId: string): void {
    const { method, started, remoteAddress } = this.head;
    this.ctx.requests.finished(() =>
      this.ctx.observer?.finished({
        method,
        route,
        status,
        durationMs: performance.now() - started,
        bytes: this.bytesOut,
        requestId,
        remoteAddress,
        aborted: this.aborted,
      }),
    );
  }

  /** Answer with `err`'s envelope (unless the client is gone) and close the connection. */
  fail(err: ApiError, route = 'unmatched'): void {
    this.receiving = undefined;
    this.stopBodyTimer();
    const requestId = requestIdOf(this.head.headers);
    const hdrs = { ...securityHeaders(this.ctx.tls), 'content-type': 'application/json', 'x-request-id': requestId };
    if (!this.aborted) this.bytesOut = writeWhole(this.res, err.status, hdrs, JSON.stringify(err.toEnvelope()), true);
    this.done(err.status, route, requestId);
  }

  async write(out: HttpResponse): Promise<void> {
    if (this.aborted) return this.done(out.status, out.route, out.requestId);
    if (!out.stream) {
      this.bytesOut = writeWhole(this.res, out.status, out.headers, out.body ?? '', this.ctx.requests.draining);
      return this.done(out.status, out.route, out.requestId);
    }
    await writeStream(this.res, out, this.stream, (n) => (this.bytesOut += n));
    this.done(out.status, out.route, out.requestId);
  }
}

/**
 * Read the body under `limit` and hand it to `dispatch`, or answer 400 (bad content-length), 413
 * (too large) or 408 (the body stopped arriving) through `exchange`.
 */
function readBody(
  res: UwsResponse,
  exchange: Exchange,
  headers: Record<string, string>,
  limit: number,
  route: string | undefined,
  bodyTimeoutMs: number,
  dispatch: (body: Buffer) => void,
): void {
  const declared = headers['content-length'];
  if (declared !== undefined && !/^\d+$/.test(declared)) return exchange.fail(errors.badRequest('invalid content-length'), route);
  if (declared !== undefined && Number(declared) > limit) return refuseBody(res, exchange, declared, errors.bodyTooLarge(limit), route);
  const hasBody = (declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined;

  if (!hasBody) return dispatch(Buffer.alloc(0));
  const chunks: Buffer[] = [];
  let received = 0;
  let refused = false;
  let answered = false;
  exchange.receiving = route ?? 'unmatched';
  const timedOut = () => {
    if (answered || exchange.aborted) return;
    answered = true;
    chunks.length = 0;
    const incomplete =
      `request body incomplete: nothing arrived for ${bodyTimeoutMs} ms ` + `(${received} of ${declared ?? 'chunked'} bytes received)`;
    exchange.fail(refused ? errors.bodyTooLarge(limit) : new ApiError('request_timeout', incomplete), route);
  };
  exchange.awaitBody(timedOut);
  res.onData((ab, isLast) => {
    if (answered) return;
    exchange.awaitBody(timedOut);
    received += ab.byteLength;
    if (refused || received > limit) {
      // Past the limit: drop the rest and answer when the client is done (see `refuseBody`).
      refused = true;
      chunks.length = 0;
      if (!answered && (isLast || received > limit + DRAIN_MAX)) {
        answered = true;
        exchange.fail(errors.bodyTooLarge(limit), route);
      }
      return;
    }
    // uWS reuses the ArrayBuffer after this callback returns: copy it.
    chunks.push(Buffer.from(ab.slice(0)));
    if (isLast) dispatch(Buffer.concat(chunks, received));
  });
}

/**
 * An oversized body is refused with 413 once the client has sent it (read and dropped, at most
 * DRAIN_MAX bytes): closing while the client still writes made it fail with a broken pipe
 * before it read the answer (2% of 2 MiB posts on loopback). A body declared bigger than
 * DRAIN_MAX is refused at once. (uWS answers `Expect: 100-continue` itself, before this
 * handler runs, so such a client sends its body too.)
 */
function refuseBody(res: UwsResponse, exchange: Exchange, declared: string, err: ApiError, route: string | undefined): void {
  if (Number(declared) > DRAIN_MAX) return exchange.fail(err, route);
  let dropped = 0;
  let answered = false;
  exchange.receiving = route ?? 'unmatched';
  // A client that stops sending the rest still learns why it was refused.
  const timedOut = () => {
    if (answered) return;
    answered = true;
    exchange.fail(err, route);
  };
  exchange.awaitBody(timedOut);
  res.onData((ab, isLast) => {
    exchange.awaitBody(timedOut);
    dropped += ab.byteLength;
    if (!answered && (isLast || dropped > DRAIN_MAX)) {
      answered = true;
      exchange.fail(err, route);
    }
  });
}

function writeWhole(
  res: UwsResponse,
  status: number,
  headers: Record<string, string>,
  body: Uint8Array | string,
  closeConnection: boolean,
): number {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    for (const k in headers) res.writeHeader(k, headers[k] as string);
    res.end(body, closeConnection);
  });
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

/** Status recorded (access log, metrics; never sent) for a client that went away while sending its body, as nginx logs it. */
const CLIENT_CLOSED = 499;

/** The client's `x-request-id` when it is one we accept, else a new one. */
function requestIdOf(headers: Record<string, string>): string {
  const incoming = headers['x-request-id'];
  return incoming && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Most bytes of an oversized body read and dropped before the 413 (see `refuse`). */
const DRAIN_MAX = 8 * 1024 * 1024;

/** Largest body slice written under one cork (uWS's cork buffer is 16 KiB, framing included). */
const CORKED_SLICE = 15 * 1024;

interface StreamState {
  aborted(): boolean;
  /** resolved when the client goes away */
  waiters: Set<() => void>;
}

async function writeStream(res: UwsResponse, out: HttpResponse, state: StreamState, count: (n: number) => void): Promise<void> {
  const isAborted = state.aborted;
  // This uWS build keeps the first onWritable handler of a response and ignores later ones,
  // so one handler is registered per stream and it wakes whoever waits for the current drain.
  let waiting: (() => void) | undefined;
  res.onWritable(() => {
    const wake = waiting;
    waiting = undefined;
    wake?.();
    return true;
  });
  const drain = (): Promise<void> =>
    new Promise((resolve) => {
      if (isAborted()) return resolve();
      const wake = () => {
        state.waiters.delete(wake);
        waiting = undefined;
        resolve();
      };
      state.waiters.add(wake);
      waiting = wake;
    });
  const iterator = (out.stream as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  res.cork(() => {
    res.writeStatus(statusLine(out.status));
    for (const k in out.headers) res.writeHeader(k, out.headers[k] as string);
  });
  try {
    for (;;) {
      const next = await iterator.next();
      if (isAborted()) break;
      if (next.done) {
        res.cork(() => res.end());
        return;
      }
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      count(chunk.byteLength);
      // Corked, in slices below uWS's 16 KiB cork buffer: in this build a corked write() of 16 KiB
      // or more corrupts the chunked framing under backpressure, and an uncorked write() prints a
      // plain-text warning into our JSON log (test/http/uws-adapter.test.ts guards both).
      for (let off = 0; off < chunk.byteLength && !isAborted(); off += CORKED_SLICE) {
        const slice = chunk.subarray(off, Math.min(off + CORKED_SLICE, chunk.byteLength));
        let ok = true;
        res.cork(() => {
          ok = res.write(slice);
        });
        if (!ok) await drain();
      }
      if (isAborted()) break;
    }
  } catch {
    // Headers are gone already: cut the connection so the client sees a truncated stream,
    // never a short body that looks complete (exports end with an explicit terminator line).
    if (!isAborted()) res.close();
  } finally {
    if (isAborted()) await iterator.return?.();
  }
}

/** The fallback engine's getQuery() throws on some URLs; a query we cannot read is treated as empty. */
function readQuery(req: UwsRequest): string {
  try {
    return req.getQuery() ?? '';
  } catch {
    return '';
  }
}

/** Percent-decoding happens per segment in the router; here we only refuse what cannot be a path. */
function normalisePath(url: string): string | undefined {
  if (!url.startsWith('/') || url.length > 8192) return undefined;
  const path = url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  return path;
}

export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
