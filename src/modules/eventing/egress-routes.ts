/** `GET /v1/m/eventing/egress-policy` and its dry-run check of one endpoint (docs/eventing.md "Egress control"). */
import { route, type AnyRoute } from '../../contract/route.js';
import { tenantOf } from '../../http/request-scope.js';
import { checkEgress, readEgressPolicy, wouldBlock } from './egress.js';
import { EgressCheckAnswer, EgressCheckBody, EgressPolicyAnswer } from './schemas.js';

const beta = { stability: 'beta' as const, tags: ['eventing'] };

export const egressRoutes: AnyRoute[] = [
  route({
    ...beta,
    method: 'GET',
    path: '/v1/m/eventing/egress-policy',
    operationId: 'eventingEgressPolicy',
    summary: 'Egress mode, allowlist, fence state, and the enabled subscriptions enforcing would block',
    permission: 'eventing:egress:read',
    response: EgressPolicyAnswer,
    handler: async (ctx) => {
      const policy = await readEgressPolicy(ctx.services.store);
      return { ...policy, would_block: await wouldBlock(ctx.services.store, tenantOf(ctx), policy.allow) };
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: '/v1/m/eventing/egress-policy/check',
    operationId: 'eventingEgressCheck',
    unaudited: 'read-only: checks a URL against the egress policy, stores nothing',
    summary: 'Dry run: would this endpoint be allowed by the egress allowlist, and why (changes nothing)',
    permission: 'eventing:egress:read',
    body: EgressCheckBody,
    response: EgressCheckAnswer,
    handler: async (ctx) => {
      const policy = await readEgressPolicy(ctx.services.store);
      const v = checkEgress(ctx.body.endpoint, policy.allow);
      return { endpoint: ctx.body.endpoint, mode: policy.mode, allowed: v.allowed, enforced: policy.mode === 'enforced', reason: v.reason };
    },
  }),
];
