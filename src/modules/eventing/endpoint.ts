/**
 * Which receiver endpoints a subscription may name (docs/eventing.md "Endpoints"): HTTPS only,
 * unless the operator started `svc serve` with the development flag
 * `SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS=true`, which allows plain HTTP and loopback receivers
 * (local development and tests; never in production). The destination itself is the egress
 * guard's (src/events/egress): `refuseEndpointEgress` checks the literal address or what the name
 * resolves to now (400 `egress_refused`); every delivery checks again at connect time.
 */
import { ApiError, errors } from '../../contract/errors.js';
import { authoringRefusal } from '../../events/egress/connect.js';
import { devFlag } from '../../events/egress/policy.js';

export function insecureEndpointsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return devFlag(env);
}

/** 400 `egress_refused` when the endpoint's host is, or now resolves to, an address the egress guard refuses. */
export async function refuseEndpointEgress(endpoint: string): Promise<void> {
  const url = new URL(endpoint);
  const refused = await authoringRefusal(url.hostname, Number(url.port) || (url.protocol === 'https:' ? 443 : 80));
  if (refused !== null) throw new ApiError('egress_refused', `endpoint ${refused}`);
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
  return url.toString();
}
