/** Routes of legal holds and erasure requests: `/v1/m/compliance/…` (service.ts holds the rules). */
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { pendingApprovalBody } from '../governance/index.js';
import { mayNamePeople } from './subject-refs.js';
import {
  ApprovalRefBody,
  CustodyList,
  Erasure,
  ErasureCreateBody,
  ErasureListQuery,
  ErasurePage,
  Hold,
  HoldCheck,
  HoldCheckQuery,
  HoldCreateBody,
  HoldListQuery,
  HoldPage,
  IdParams,
  PendingApproval,
  Receipt,
} from './schemas.js';
import { checkHold, custodyEvents, getHold, listHolds, placeHold, releaseHold } from './service.js';
import { erasureReceipt, executeErasure, getErasure, listErasures, registerErasure } from './erasure-service.js';
import Type from 'typebox';

const common = { stability: 'beta' as const, tags: ['compliance'] };
const HOLDS = '/v1/m/compliance/holds';
const ERASURE = '/v1/m/compliance/erasure';

export const complianceRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: HOLDS,
    operationId: 'listLegalHolds',
    summary: 'List legal holds (keyset pages in creation order)',
    permission: 'compliance:hold:read',
    query: HoldListQuery,
    response: HoldPage,
    handler: (ctx) => listHolds(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common,
    method: 'POST',
    path: HOLDS,
    operationId: 'placeLegalHold',
    summary: 'Place a legal hold (active at once; scope subject by default)',
    permission: 'compliance:hold:admin',
    audit: 'compliance.hold.place',
    body: HoldCreateBody,
    response: Hold,
    status: 201,
    handler: async (ctx) => reply.json(await placeHold(ctx, ctx.body), 201),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${HOLDS}/check`,
    operationId: 'checkLegalHold',
    summary: 'Is this subject or data class held? (the active holds covering it)',
    permission: 'compliance:hold:read',
    query: HoldCheckQuery,
    response: HoldCheck,
    handler: (ctx) => checkHold(ctx.services.store, tenantOf(ctx), ctx.query, mayNamePeople(ctx.principal, tenantOf(ctx))),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${HOLDS}/{id}`,
    operationId: 'getLegalHold',
    summary: 'One legal hold',
    permission: 'compliance:hold:read',
    params: IdParams,
    response: Hold,
    handler: (ctx) => getHold(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${HOLDS}/{id}/events`,
    operationId: 'listLegalHoldEvents',
    summary: 'The custody chain of a legal hold (each step with its ledger seq and hash)',
    permission: 'compliance:hold:read',
    params: IdParams,
    response: CustodyList,
    handler: async (ctx) => ({ items: await custodyEvents(ctx.services.store, tenantOf(ctx), 'hold', ctx.params.id) }),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${HOLDS}/{id}/release`,
    operationId: 'releaseLegalHold',
    summary: 'Release a legal hold under dual control: 202 pending_approval without an approved approval_id, then released',
    permission: 'compliance:hold:admin',
    // Without an approval id the release opens one (dual control); with one it consumes it, then releases.
    audit: [
      'compliance.hold.release',
      'compliance.hold.release_request',
      'compliance.hold.release_approve',
      'approval.request',
      'approval.consume',
    ],
    params: IdParams,
    body: ApprovalRefBody,
    response: Type.Union([Hold, PendingApproval]),
    status: 200,
    handler: async (ctx) => {
      const out = await releaseHold(ctx, ctx.params.id, ctx.body);
      return 'pending' in out ? reply.json(pendingApprovalBody(out.pending), 202) : out.hold;
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: ERASURE,
    operationId: 'listErasureRequests',
    summary: 'List erasure requests',
    permission: 'compliance:erasure:read',
    query: ErasureListQuery,
    response: ErasurePage,
    handler: (ctx) => listErasures(ctx.services.store, tenantOf(ctx), { ...ctx.query, limit: ctx.query.limit ?? 50 }),
  }),
  route({
    ...common,
    method: 'POST',
    path: ERASURE,
    operationId: 'registerErasureRequest',
    summary: 'Register an erasure request (received; destroys nothing)',
    permission: 'compliance:erasure:admin',
    audit: 'compliance.erasure.register',
    body: ErasureCreateBody,
    response: Erasure,
    status: 201,
    handler: async (ctx) => reply.json(await registerErasure(ctx, ctx.body), 201),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${ERASURE}/{id}`,
    operationId: 'getErasureRequest',
    summary: 'One erasure request',
    permission: 'compliance:erasure:read',
    params: IdParams,
    response: Erasure,
    handler: (ctx) => getErasure(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${ERASURE}/{id}/events`,
    operationId: 'listErasureRequestEvents',
    summary: 'The custody chain of an erasure request',
    permission: 'compliance:erasure:read',
    params: IdParams,
    response: CustodyList,
    handler: async (ctx) => ({ items: await custodyEvents(ctx.services.store, tenantOf(ctx), 'erasure', ctx.params.id) }),
  }),
  route({
    ...common,
    method: 'GET',
    path: `${ERASURE}/{id}/receipt`,
    operationId: 'getErasureReceipt',
    summary: 'The sealed receipt of a completed erasure (anchored to its ledger record)',
    permission: 'compliance:erasure:read',
    params: IdParams,
    response: Receipt,
    handler: (ctx) => erasureReceipt(ctx.services.store, tenantOf(ctx), ctx.params.id),
  }),
  route({
    ...common,
    method: 'POST',
    path: `${ERASURE}/{id}/execute`,
    operationId: 'executeErasureRequest',
    summary:
      'Execute an erasure under dual control: 409 legal_hold under a covering hold; 202 pending_approval without an approved ' +
      'approval_id; then completed',
    permission: 'compliance:erasure:admin',
    audit: [
      'compliance.erasure.execute',
      'compliance.erasure.refuse',
      'compliance.erasure.execute_request',
      'approval.request',
      'approval.consume',
    ],
    params: IdParams,
    body: ApprovalRefBody,
    response: Type.Union([Erasure, PendingApproval]),
    status: 200,
    handler: async (ctx) => {
      const out = await executeErasure(ctx, ctx.params.id, ctx.body);
      return 'pending' in out ? reply.json(pendingApprovalBody(out.pending), 202) : out.erasure;
    },
  }),
];
