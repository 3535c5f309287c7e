/**
 * The policy decision layer (spec Authentication 5: "the policy decision layer only restricts").
 * The authorizer calls it after the role check has allowed a request, so an engine can deny what
 * roles allow but never allow what they deny. `SERVICE_PDP_ENGINE` selects `none` (default,
 * here), `cedar` (src/auth/pdp-cedar.ts) or `opa` (src/auth/pdp-opa.ts).
 */

/** What a decision is asked about. */
export interface PdpInput {
  principal: {
    /** ledger actor, `user:<id>` or `token:<id>` */
    id: string;
    kind: 'user' | 'token';
    userId: string;
    superadmin: boolean;
    /** the role in `resource.tenant`, when there is one */
    role?: string;
    aal: number;
  };
  /** the route's permission, e.g. `agent:write` */
  action: string;
  resource: { kind: string; id?: string; tenant?: string };
  context: { method: string; route: string; remoteAddress: string; requestId: string };
}

export type PdpDecision = 'allow' | 'deny';

export interface PolicyDecisionPoint {
  readonly engine: string;
  decide(input: PdpInput): Promise<PdpDecision>;
}

/** `SERVICE_PDP_ENGINE=none`: roles alone decide; this layer allows whatever they allowed. */
export const nonePdp: PolicyDecisionPoint = {
  engine: 'none',
  decide: async () => 'allow',
};

/** A configuration mistake found at startup; `svc serve` refuses to start with it. */
export class PdpConfigError extends Error {
  override readonly name = 'PdpConfigError';
}

/** Logger subset the engines use to explain a deny caused by an error. */
export interface PdpLog {
  warn(obj: object, msg?: string): void;
}
