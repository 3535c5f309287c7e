/** Types the rest of the server needs from the HTTP engine, without loading it (no import circles). */

/** Which uWS build runs: the native addon, or the package's slow pure-Node fallback. */
export type HttpEngine = 'uws-native' | 'uws-fallback';

/** Per-request callbacks for metrics and the access log. */
export interface HttpObserver {
  started(): void;
  finished(e: { method: string; route: string; status: number; durationMs: number; bytes: number; requestId: string; remoteAddress: string; aborted: boolean }): void;
}
