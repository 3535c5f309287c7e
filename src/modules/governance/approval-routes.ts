/** Routes of approvals under dual control: `/v1/m/governance/approvals…` (approval-service.ts holds the rules). */
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../core/agents/scope.js';
import { cancelApproval, consumeApproval, decideApproval, getApproval, listApprovals, listDecisions, requestApproval } from './approval-service.js';
import { Approval, ApprovalCreateBody, ApprovalListQuery, ApprovalPage, CancelBody, ConsumeBody, DecisionCreateBody, DecisionList, DecisionResult, IdParams } from './approval-schemas.js';

const common = { stability: 'beta' as const, tags: ['governance'] };
const BASE = '/v1/m/governance/approvals';

export const approvalRoutes: AnyRoute[] = [
  route({
    ...common, method: 'GET', path: BASE, operationId: 'listApprovals', summary: 'List approval requests (keyset pages in creation order)',
    permission: 'governance:approval:read', query: ApprovalListQuery, response: ApprovalPage,
    handler: (ctx) => listApprovals(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common, method: 'POST', path: BASE, operationId: 'createApproval', summary: 'Request an approval for a plan (action, subject, params); quorum default 2 distinct people, never the requester',
    permission: 'governance:approval:write', audit: 'approval.request', body: ApprovalCreateBody, response: Approval, status: 201,
    handler: async (ctx) => reply.json(await requestApproval(ctx, ctx.body), 201),
  }),
  route({
    ...common, method: 'GET', path: `${BASE}/{id}`, operationId: 'getApproval', summary: 'One approval request',
    permission: 'governance:approval:read', params: IdParams, response: Approval,
    handler: (ctx) => getApproval(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common, method: 'GET', path: `${BASE}/{id}/decisions`, operationId: 'listApprovalDecisions', summary: 'The decisions on an approval request',
    permission: 'governance:approval:read', params: IdParams, response: DecisionList,
    handler: async (ctx) => ({ items: await listDecisions(ctx.services.store, tenantOf(ctx), ctx.params.id) }),
  }),
  route({
    ...common, method: 'POST', path: `${BASE}/{id}/decisions`, operationId: 'decideApproval', summary: 'Approve or reject (one decision per person; the requester cannot decide)',
    permission: 'governance:approval:write', audit: 'approval.decide', params: IdParams, body: DecisionCreateBody, response: DecisionResult, status: 201,
    handler: async (ctx) => reply.json(await decideApproval(ctx, ctx.params.id, ctx.body), 201),
  }),
  route({
    ...common, method: 'POST', path: `${BASE}/{id}/cancel`, operationId: 'cancelApproval', summary: 'Cancel a pending or approved (unused) approval',
    permission: 'governance:approval:write', audit: 'approval.cancel', params: IdParams, body: CancelBody, response: Approval,
    handler: (ctx) => cancelApproval(ctx, ctx.params.id, ctx.body.reason ?? ''),
  }),
  route({
    ...common, method: 'POST', path: `${BASE}/{id}/consume`, operationId: 'consumeApproval', summary: 'Use an approval once for exactly the approved plan (409 approval_required / approval_invalid otherwise)',
    permission: 'governance:approval:write', audit: 'approval.consume', params: IdParams, body: ConsumeBody, response: Approval,
    handler: (ctx) => consumeApproval(ctx, ctx.params.id, ctx.body as never),
  }),
];
