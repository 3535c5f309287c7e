/**
 * The HTTP client of SSO discovery and the provider test (docs/configuration.md "Outgoing
 * connections"): an undici agent whose connector goes through the egress guard (every address
 * the issuer resolves to is checked, the socket connects to a checked one) and verifies
 * certificates explicitly (never NODE_TLS_REJECT_UNAUTHORIZED's default). openid-client takes it
 * as its `customFetch`.
 */
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { EgressRefusedError, egressRefusalOf, guardConnector } from '../../events/egress/connect.js';

let agent: Agent | undefined;

/** The shared agent (made on first use: most servers never configure SSO). */
export function ssoDispatcher(): Agent {
  agent ??= new Agent({ connect: guardConnector(buildConnector({ rejectUnauthorized: true, timeout: 5_000 })) });
  return agent;
}

/** openid-client's `customFetch`: the platform's fetch signature over the guarded agent. */
export const ssoFetch = ((url: string, options: RequestInit) =>
  undiciFetch(url, { ...(options as object), dispatcher: ssoDispatcher() }).catch((err: unknown) => {
    // fetch says only "fetch failed": a refusal of the guard is named (egress_refused, the address and its class)
    const refused = egressRefusalOf(err);
    throw refused === null ? err : new EgressRefusedError(`egress_refused: ${refused}`);
  })) as unknown as (
  url: string,
  options: RequestInit,
) => Promise<Response>;
