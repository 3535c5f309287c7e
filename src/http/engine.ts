/** Types the rest of the server needs from the HTTP engine, without loading it (no import circles). */

/** Which uWS build runs: the native addon, or the package's slow pure-Node fallback. */
export type HttpEngine = 'uws-native' | 'uws-fallback';

/** Per-request callbacks for metrics and the access log. */
export interface HttpObserver {
  started(): void;
  finished(e: {
    method: string;
    route: string;
    status: number;
    durationMs: number;
    bytes: number;
    requestId: string;
    remoteAddress: string;
    aborted: boolean;
  }): void;
}

/** Default of `bodyTimeoutMs`: below uWS's own idle cut (10 s, checked every 4 s), so the 408 is written first. */
export const DEFAULT_BODY_TIMEOUT_MS = 8_000;
