/**
 * The OPA engine (`SERVICE_PDP_ENGINE=opa`): one POST per decision to OPA's REST Data API
 * (`POST /v1/data/<path>` with `{"input": …}`, https://www.openpolicyagent.org/docs/rest-api),
 * the way operators run OPA beside a service. Anything but an explicit allow is a deny:
 * timeouts, non-200 answers, malformed bodies and an undefined decision all fail closed.
 */
import { Agent, fetch } from 'undici';
import { PdpConfigError, type PdpDecision, type PdpInput, type PdpLog, type PolicyDecisionPoint } from './pdp.js';

/** Deadline of one OPA decision when `SERVICE_PDP_OPA_TIMEOUT_MS` is not set. */
export const DEFAULT_OPA_TIMEOUT_MS = 2000;

export interface OpaOptions {
  /** full decision URL, path beginning `/v1/data/` */
  url: string;
  timeoutMs: number;
}

/** Validates the URL at startup and returns the engine. */
export function createOpaPdp(options: OpaOptions, log: PdpLog): PolicyDecisionPoint {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new PdpConfigError(`SERVICE_PDP_OPA_URL is not a URL: ${JSON.stringify(options.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new PdpConfigError('SERVICE_PDP_OPA_URL must be http:// or https://');
  if (!url.pathname.startsWith('/v1/data/') || url.pathname === '/v1/data/') {
    throw new PdpConfigError(
      `SERVICE_PDP_OPA_URL must name a decision under /v1/data/, e.g. http://127.0.0.1:8181/v1/data/svc/allow; got path ${url.pathname}`,
    );
  }
  const target = url.toString();
  // certificate verification explicit, never NODE_TLS_REJECT_UNAUTHORIZED's (docs/tls.md "Outgoing TLS")
  const dispatcher = new Agent({ connect: { rejectUnauthorized: true } });
  return {
    engine: 'opa',
    async decide(input: PdpInput): Promise<PdpDecision> {
      try {
        const res = await fetch(target, {
          dispatcher,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ input }),
          signal: AbortSignal.timeout(options.timeoutMs),
          redirect: 'error',
        });
        const text = await res.text();
        if (res.status !== 200) {
          log.warn({ pdp: 'opa', action: input.action, status: res.status }, 'opa answered with an error status; denying');
          return 'deny';
        }
        const decision = readDecision(JSON.parse(text) as unknown);
        if (decision === undefined) log.warn({ pdp: 'opa', action: input.action }, 'opa decision undefined or not boolean; denying');
        return decision === true ? 'allow' : 'deny';
      } catch (err) {
        log.warn({ pdp: 'opa', action: input.action, err: (err as Error).message }, 'opa unreachable, slow or malformed; denying');
        return 'deny';
      }
    },
  };
}

/** `{result: true|false}` or `{result: {allow: true|false}}`; anything else is undefined (→ deny). */
function readDecision(body: unknown): boolean | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const result = (body as { result?: unknown }).result;
  if (typeof result === 'boolean') return result;
  if (typeof result === 'object' && result !== null) {
    const allow = (result as { allow?: unknown }).allow;
    if (typeof allow === 'boolean') return allow;
  }
  return undefined;
}
