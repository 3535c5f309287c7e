/**
 * Session cookies for the web console (docs/web.md "Cookies beside bearer tokens"). A browser
 * signs in through `POST /v1/m/identity/browser-session`, which keeps the `svcs_` session token in
 * an HttpOnly, Secure, SameSite=Strict cookie: script on the page can never read it. Because a
 * browser attaches cookies by itself, every mutation authenticated by the cookie must also carry
 * `X-CSRF-Token`, a token derived from the session token (OWASP CSRF cheat sheet, synchronizer
 * token): the console gets it in the JSON answer of the login route or of
 * `GET /v1/m/identity/browser-session`, which a cross-site page cannot read (no CORS), nor compute.
 * Bearer tokens are untouched.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../contract/errors.js';

/** `__Host-`: the browser accepts it only Secure, Path=/ and without Domain (RFC 6265bis §4.1.3.2). */
export const SESSION_COOKIE = '__Host-svc_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** The cookies of a `Cookie` header (RFC 6265 §5.4), first occurrence of a name wins. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  // Two Cookie header lines reach us joined by ", " (uws-adapter.ts); split on both.
  for (const part of header.split(/;|, /)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

/** The CSRF token bound to a session token: derived, so nothing is stored. */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update('svc-csrf\0').update(sessionToken).digest('base64url');
}

/** The `Set-Cookie` value that starts a browser session lasting `maxAgeSeconds`. */
export function sessionCookie(sessionToken: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${sessionToken}; HttpOnly; Path=/; Secure; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`;
}

/** The `Set-Cookie` value that ends it. */
export const CLEARED_COOKIE = `${SESSION_COOKIE}=; HttpOnly; Path=/; Secure; SameSite=Strict; Max-Age=0`;

/**
 * The session token a browser request presents in its cookie, checked for CSRF on mutations;
 * undefined when the request has no session cookie. Only `svcs_` sessions ride in cookies.
 */
export function cookieSessionToken(headers: Readonly<Record<string, string>>, method: string): string | undefined {
  const token = parseCookies(headers['cookie']).get(SESSION_COOKIE);
  if (!token || !token.startsWith('svcs_')) return undefined;
  if (!SAFE_METHODS.has(method)) {
    const sent = Buffer.from(headers[CSRF_HEADER] ?? '', 'utf8');
    const want = Buffer.from(csrfTokenFor(token), 'utf8');
    if (sent.length !== want.length || !timingSafeEqual(sent, want)) {
      throw new ApiError('forbidden', `a request authenticated by the session cookie must send the ${CSRF_HEADER} header on ${method}`);
    }
  }
  return token;
}
