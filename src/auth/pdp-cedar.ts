/**
 * The Cedar engine (`SERVICE_PDP_ENGINE=cedar`), evaluated in-process by the official Cedar
 * WebAssembly build. The entity mapping is documented in docs/policy.md; keep the two in step.
 * Cedar is deny-by-default, so a policy file must `permit` what it does not mean to restrict.
 */
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import type { CedarValueJson, EntityJson, EntityUidJson } from '@cedar-policy/cedar-wasm/nodejs';
import { PdpConfigError, type PdpDecision, type PdpInput, type PdpLog, type PolicyDecisionPoint } from './pdp.js';

/** Cedar namespace of every entity type and action svc hands to the engine. */
export const CEDAR_NAMESPACE = 'Svc';

let nextSetId = 0;

/** Parses `policiesText` once (a parse error refuses startup) and answers decisions from the cached set. */
export function createCedarPdp(policiesText: string, log: PdpLog): PolicyDecisionPoint {
  const setId = `svc-pdp-${++nextSetId}`;
  const parsed = cedar.preparsePolicySet(setId, { staticPolicies: policiesText });
  if (parsed.type !== 'success') {
    throw new PdpConfigError(`Cedar policies do not parse: ${parsed.errors.map((e) => e.message).join('; ')}`);
  }
  return {
    engine: 'cedar',
    async decide(input: PdpInput): Promise<PdpDecision> {
      try {
        const request = cedarRequest(input);
        const answer = cedar.statefulIsAuthorized({ ...request, preparsedPolicySetId: setId });
        if (answer.type !== 'success') {
          log.warn({ pdp: 'cedar', action: input.action, errors: answer.errors.map((e) => e.message) }, 'cedar evaluation failed; denying');
          return 'deny';
        }
        // A policy that errors is skipped by Cedar; were it a `forbid`, skipping it would widen
        // access, so any evaluation error denies (fail closed, docs/policy.md).
        if (answer.response.diagnostics.errors.length > 0) {
          log.warn(
            {
              pdp: 'cedar',
              action: input.action,
              errors: answer.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`),
            },
            'cedar policy error; denying',
          );
          return 'deny';
        }
        return answer.response.decision === 'allow' ? 'allow' : 'deny';
      } catch (err) {
        log.warn({ pdp: 'cedar', action: input.action, err: (err as Error).message }, 'cedar engine threw; denying');
        return 'deny';
      }
    },
  };
}

/** The Cedar request for one decision: principal, action, resource, context and the entity slice they need. */
export function cedarRequest(input: PdpInput): {
  principal: EntityUidJson;
  action: EntityUidJson;
  resource: EntityUidJson;
  context: Record<string, CedarValueJson>;
  entities: EntityJson[];
} {
  const tenant = input.resource.tenant;
  const tenantUid = tenant ? uid('Tenant', tenant) : undefined;
  const p = input.principal;
  // Users are named by user id; an API key by its token id (the actor is `token:<id>`).
  const principal = p.kind === 'token' ? uid('ApiKey', p.id.replace(/^token:/, '')) : uid('User', p.userId);
  const verb = input.action.split(':').at(-1) ?? input.action;
  const action = uid('Action', input.action);
  const resource = uid('Resource', input.resource.id ? `${input.resource.kind}/${input.resource.id}` : input.resource.kind);
  const entities: EntityJson[] = [
    // The role check already placed the principal in the request's tenant; Cedar sees it as membership.
    {
      uid: principal,
      attrs: toRecord({
        kind: p.kind,
        actor: p.id,
        user_id: p.userId,
        superadmin: p.superadmin,
        aal: p.aal,
        ...(p.role ? { role: p.role } : {}),
      }),
      parents: tenantUid ? [tenantUid] : [],
    },
    { uid: action, attrs: {}, parents: verb !== input.action ? [uid('Action', verb)] : [] },
    {
      uid: resource,
      attrs: { kind: input.resource.kind, ...(input.resource.id ? { id: input.resource.id } : {}), ...(tenant ? { tenant } : {}) },
      parents: tenantUid ? [tenantUid] : [],
    },
  ];
  if (tenantUid) entities.push({ uid: tenantUid, attrs: {}, parents: [] });
  const context = toRecord({ ...input.context, aal: p.aal, ...(tenant ? { tenant } : {}) });
  return { principal, action, resource, context, entities };
}

function uid(type: string, id: string): EntityUidJson {
  return { type: `${CEDAR_NAMESPACE}::${type}`, id };
}

/** JSON → Cedar values: integers stay Longs; non-integral numbers, null and undefined are left out. */
function toCedar(value: unknown): CedarValueJson | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (Array.isArray(value)) return value.map(toCedar).filter((v): v is CedarValueJson => v !== undefined);
  if (typeof value === 'object' && value !== null) return toRecord(value as Record<string, unknown>);
  return undefined;
}

function toRecord(obj: Record<string, unknown>): Record<string, CedarValueJson> {
  const out: Record<string, CedarValueJson> = {};
  for (const [k, v] of Object.entries(obj)) {
    const c = toCedar(v);
    if (c !== undefined) out[k] = c;
  }
  return out;
}
