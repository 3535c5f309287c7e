/** Enforced egress mode at authoring time: an enabled subscription to a host outside the allowlist is a 400 naming the rule. */
import { errors } from '../../contract/errors.js';
import type { Store } from '../../store/store-types.js';
import { readEgressPolicy, checkEgress } from './egress.js';

export async function refuseByEgress(store: Store, input: { endpoint: string; enabled?: boolean }): Promise<void> {
  if (input.enabled === false) return;
  const policy = await readEgressPolicy(store);
  if (policy.mode !== 'enforced') return;
  const v = checkEgress(input.endpoint, policy.allow);
  if (!v.allowed)
    throw errors.badRequest(`egress policy enforced: ${v.reason} (GET /v1/m/eventing/egress-policy; svc eventing egress actuate --allow)`);
}

/** The database fence (migration 30) refused the write: a 400 naming it, not a 500. Rethrows anything else. */
export function fenceRefusal(err: unknown): never {
  if (err instanceof Error && /egress fence/.test(err.message)) {
    throw errors.badRequest(
      'egress fence: the database refuses an enabled subscription to a host outside the egress allowlist (svc eventing fence status)',
    );
  }
  throw err;
}
