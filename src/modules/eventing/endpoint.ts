/**
 * Which receiver endpoints a subscription may name (docs/eventing.md "Endpoints"): HTTPS only, and
 * never a loopback or unspecified address, unless the operator started `svc serve` with the
 * development flag `SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS=true`, which allows plain HTTP and
 * loopback receivers (local development and tests; never in production). Checked on the literal
 * host: a name that resolves to loopback is not caught here (nor by the egress allowlist, egress.ts).
 */
import { isIP } from 'node:net';
import { errors } from '../../contract/errors.js';

export function insecureEndpointsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true', 'yes'].includes((env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] ?? '').toLowerCase());
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.') || h === '0.0.0.0';
  if (isIP(h) === 6) return h === '::1' || h === '::' || h.startsWith('::ffff:127.');
  return false;
}

/** The endpoint as stored, or 400 naming the rule it broke. */
export function checkEndpoint(endpoint: string, allowInsecure: boolean): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw errors.badRequest('endpoint is not an absolute URL');
  }
  if (url.username || url.password) throw errors.badRequest('endpoint must not carry credentials; use auth');
  if (url.hash) throw errors.badRequest('endpoint must not carry a fragment');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowInsecure)) {
    throw errors.badRequest(
      allowInsecure
        ? 'endpoint must be https:// or http://'
        : 'endpoint must be https:// (plain HTTP needs SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS=true, a development flag)',
    );
  }
  if (isLoopback(url.hostname) && !allowInsecure)
    throw errors.badRequest(
      'endpoint is a loopback address (allowed only with SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS=true, a development flag)',
    );
  return url.toString();
}
