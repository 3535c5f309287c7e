/**
 * Which redirect URIs a single sign-on login may hand to the provider (docs/sso.md): the CLI's
 * loopback callback of RFC 8252 §7.3 (`http://127.0.0.1:<any port>/callback` or the same on
 * `[::1]`; not `localhost`, §8.3), and the https URIs the administrator lists in `redirect_uris`,
 * matched exactly. Anything else is refused here, not left to the provider's registration.
 */
import { errors } from '../../contract/errors.js';
import type { SsoSettings } from './sso-settings.js';

function parse(uri: string, what: string): URL {
  try {
    return new URL(uri);
  } catch {
    throw errors.badRequest(`${what} is not a URL`);
  }
}

/** A configured redirect URI: https, no fragment or credentials; answered in its canonical form. */
export function checkConfiguredRedirectUri(uri: string): string {
  const u = parse(uri, 'redirect_uris entry');
  if (u.protocol !== 'https:') throw errors.badRequest(`redirect_uris: ${uri} must be https`);
  if (u.hash || u.username || u.password) throw errors.badRequest(`redirect_uris: ${uri} must not carry a fragment or credentials`);
  return u.toString();
}

/** True for the loopback callback form: http, an IP loopback literal, any port, path /callback, nothing else. */
function isLoopbackCallback(u: URL): boolean {
  return (
    u.protocol === 'http:' &&
    (u.hostname === '127.0.0.1' || u.hostname === '[::1]') &&
    u.pathname === '/callback' &&
    u.search === '' &&
    u.hash === '' &&
    u.username === '' &&
    u.password === ''
  );
}

/** The redirect URI of a start, or undefined when it is neither the loopback callback nor a configured one. */
export function allowedRedirectUri(uri: string, cfg: SsoSettings): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (isLoopbackCallback(u)) return u.toString();
  const canonical = u.toString();
  return cfg.redirect_uris.includes(canonical) ? canonical : undefined;
}
