/**
 * Chooses the policy decision layer from `SERVICE_PDP_ENGINE=cedar|opa|none` (spec Authentication 5).
 * Whatever the engine, it runs after the role check and can only restrict: an engine "allow"
 * never grants what the role table denied, and any engine failure is a deny (fail closed).
 */
import { readFile } from 'node:fs/promises';
import { createCedarPdp } from './pdp-cedar.js';
import { nonePdp, PdpConfigError, type PdpLog, type PolicyDecisionPoint } from './pdp.js';
import { createOpaPdp, DEFAULT_OPA_TIMEOUT_MS } from './pdp-opa.js';

export const PDP_ENGINES = ['none', 'cedar', 'opa'] as const;
export type PdpEngine = (typeof PDP_ENGINES)[number];

/** Decision-layer settings; `pdpConfigFromEnv` fills them from `SERVICE_PDP_*`. */
export interface PdpConfig {
  engine: PdpEngine;
  /** Cedar policy file (`SERVICE_PDP_CEDAR_POLICIES`), required for `cedar` */
  cedarPolicies?: string;
  /** OPA decision URL (`SERVICE_PDP_OPA_URL`), e.g. `http://127.0.0.1:8181/v1/data/svc/allow` */
  opaUrl?: string;
  /** OPA request deadline (`SERVICE_PDP_OPA_TIMEOUT_MS`, default 2000) */
  opaTimeoutMs?: number;
}

export { PdpConfigError, type PdpLog } from './pdp.js';

/** Reads `SERVICE_PDP_ENGINE`, `SERVICE_PDP_CEDAR_POLICIES`, `SERVICE_PDP_OPA_URL`, `SERVICE_PDP_OPA_TIMEOUT_MS`. */
export function pdpConfigFromEnv(env: NodeJS.ProcessEnv = process.env): PdpConfig {
  const raw = (env['SERVICE_PDP_ENGINE'] ?? '').trim().toLowerCase() || 'none';
  if (!(PDP_ENGINES as readonly string[]).includes(raw)) {
    throw new PdpConfigError(`SERVICE_PDP_ENGINE must be one of ${PDP_ENGINES.join(', ')}; got ${JSON.stringify(raw)}`);
  }
  const timeout = env['SERVICE_PDP_OPA_TIMEOUT_MS'];
  let opaTimeoutMs: number | undefined;
  if (timeout !== undefined && timeout !== '') {
    opaTimeoutMs = Number(timeout);
    if (!Number.isInteger(opaTimeoutMs) || opaTimeoutMs < 1 || opaTimeoutMs > 60_000) {
      throw new PdpConfigError(`SERVICE_PDP_OPA_TIMEOUT_MS must be an integer between 1 and 60000; got ${JSON.stringify(timeout)}`);
    }
  }
  return {
    engine: raw as PdpEngine,
    cedarPolicies: env['SERVICE_PDP_CEDAR_POLICIES'] || undefined,
    opaUrl: env['SERVICE_PDP_OPA_URL'] || undefined,
    opaTimeoutMs,
  };
}


/** Builds the configured engine; throws `PdpConfigError` for a missing file/URL or policies that do not parse. */
export async function selectPdp(config: PdpConfig, log: PdpLog): Promise<PolicyDecisionPoint> {
  switch (config.engine) {
    case 'none':
      return nonePdp;
    case 'cedar': {
      if (!config.cedarPolicies)
        throw new PdpConfigError('SERVICE_PDP_ENGINE=cedar needs SERVICE_PDP_CEDAR_POLICIES (a Cedar policy file)');
      let text: string;
      try {
        text = await readFile(config.cedarPolicies, 'utf8');
      } catch (err) {
        throw new PdpConfigError(`cannot read Cedar policies ${config.cedarPolicies}: ${(err as Error).message}`);
      }
      return createCedarPdp(text, log);
    }
    case 'opa': {
      if (!config.opaUrl)
        throw new PdpConfigError('SERVICE_PDP_ENGINE=opa needs SERVICE_PDP_OPA_URL (e.g. http://127.0.0.1:8181/v1/data/svc/allow)');
      return createOpaPdp({ url: config.opaUrl, timeoutMs: config.opaTimeoutMs ?? DEFAULT_OPA_TIMEOUT_MS }, log);
    }
  }
}
