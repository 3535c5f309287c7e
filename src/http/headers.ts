/** Security headers on every response (DECISIONS.md Conventions). */

const BASE: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  // API answers are data, never documents: nothing may load or frame them.
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'cache-control': 'no-store',
});

const WITH_HSTS: Readonly<Record<string, string>> = Object.freeze({
  ...BASE,
  // RFC 6797 §6.1: only meaningful (and only sent) over TLS.
  'strict-transport-security': 'max-age=63072000; includeSubDomains',
});

/** The headers to send; HSTS only when the listener speaks TLS. */
export function securityHeaders(tls: boolean): Record<string, string> {
  return { ...(tls ? WITH_HSTS : BASE) };
}
