/**
 * Module routes `/v1/m/eventing/*` (beta): the event-type catalog, webhook subscriptions, the event
 * log and deliveries (docs/eventing.md). Every mutation appends its ledger record.
 */
import type { Static } from 'typebox';
import { route, type AnyRoute } from '../../contract/route.js';
import { errors } from '../../contract/errors.js';
import { reply } from '../../http/reply.js';
import { tenantOf } from '../../http/request-scope.js';
import { decodeCursor, pageOf } from '../../contract/cursor.js';
import { cloudEvent, readEvents } from '../../events/event-log.js';
import { isDurable } from '../../events/event-types.js';
import { getDelivery, listDeliveries, queueDeliveries, recordFinished, redeliver } from '../../events/delivery/delivery-store.js';
import { newId } from '../../store/ids.js';
import { nowTimestamp } from '../../ledger/time.js';
import { fenceRefusal, refuseByEgress } from './egress-guard.js';
import { authoringInput, callerRole, runtimeOf } from './service.js';
import { refuseEndpointEgress } from './endpoint.js';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  readSubscriptionRow,
  rotateSecret,
  updateSubscription,
} from './subscription-store.js';
import {
  CloudEvent,
  DeadLettersQuery,
  DeleteQuery,
  DeliveriesQuery,
  Delivery,
  EventPage,
  EventsQuery,
  EventTypeList,
  IdParams,
  ListQuery,
  Page,
  ReplayAnswer,
  ReplayBody,
  Subscription,
  SubscriptionCreateBody,
  SubscriptionUpdateBody,
  SubscriptionWithSecret,
  TestAnswer,
} from './schemas.js';

const beta = { stability: 'beta' as const, tags: ['eventing'] };
const P = '/v1/m/eventing';
const REPLAY_MAX = 10_000;

export const eventingRoutes: AnyRoute[] = [
  route({
    ...beta,
    method: 'GET',
    path: `${P}/event-types`,
    operationId: 'eventingEventTypes',
    summary:
      'The catalog of event types: type, data schema, stability, the ' + 'permission a role needs to receive it, and whether it is durable',
    permission: 'eventing:event_type:read',
    response: EventTypeList,
    handler: (ctx) => ({
      items: runtimeOf(ctx)
        .catalog.list()
        .map((d) => ({
          type: d.type,
          source: d.source,
          description: d.description,
          stability: d.stability,
          permission: d.permission,
          schema: d.schema,
          durable: isDurable(d),
        })),
    }),
  }),
  route({
    ...beta,
    method: 'GET',
    path: `${P}/subscriptions`,
    operationId: 'eventingListSubscriptions',
    summary: 'Webhook subscriptions (keyset pages; secrets and credentials never shown)',
    permission: 'eventing:subscription:read',
    query: ListQuery,
    response: Page(Subscription),
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const limit = ctx.query.limit ?? 50;
      const after = ctx.query.cursor ? decodeCursor(ctx.query.cursor) : undefined;
      return pageOf(await ctx.services.store.withTenant(tenant, (tx) => listSubscriptions(tx, tenant, after, limit)), limit);
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: `${P}/subscriptions`,
    operationId: 'eventingCreateSubscription',
    summary: 'Create a webhook subscription; the signing secret is in this answer only',
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.create',
    body: SubscriptionCreateBody,
    response: SubscriptionWithSecret,
    status: 201,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const input = authoringInput(ctx, rt, ctx.body);
      await refuseEndpointEgress(input.endpoint);
      await refuseByEgress(ctx.services.store, input);
      const { subscription, secret } = await ctx.services.store
        .withTenant(tenant, (tx) => createSubscription(tx, ctx.services.sealer, tenant, ctx.principal?.actor ?? 'system', input))
        .catch(fenceRefusal);
      await ctx.audit(
        { kind: 'event_subscription', id: subscription.id },
        {
          name: subscription.name,
          endpoint: subscription.endpoint,
          event_types: subscription.event_types,
          role: subscription.role,
          sink_format: subscription.sink_format,
        },
      );
      await rt.engine.refresh();
      return reply.json({ ...subscription, secret }, 201);
    },
  }),
  route({
    ...beta,
    method: 'GET',
    path: `${P}/subscriptions/{id}`,
    operationId: 'eventingGetSubscription',
    summary: 'One subscription',
    permission: 'eventing:subscription:read',
    params: IdParams,
    response: Subscription,
    handler: (ctx) => ctx.services.store.withTenant(tenantOf(ctx), (tx) => getSubscription(tx, tenantOf(ctx), ctx.params.id)),
  }),
  route({
    ...beta,
    method: 'PUT',
    path: `${P}/subscriptions/{id}`,
    operationId: 'eventingUpdateSubscription',
    summary: 'Edit a subscription in place (the signing secret stays); `version` must be current',
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.update',
    params: IdParams,
    body: SubscriptionUpdateBody,
    response: Subscription,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const input = authoringInput(ctx, rt, ctx.body);
      await refuseEndpointEgress(input.endpoint);
      await refuseByEgress(ctx.services.store, input);
      const { after } = await ctx.services.store
        .withTenant(tenant, (tx) => updateSubscription(tx, ctx.services.sealer, tenant, ctx.params.id, ctx.body.version, input))
        .catch(fenceRefusal);
      await ctx.audit(
        { kind: 'event_subscription', id: after.id },
        {
          name: after.name,
          endpoint: after.endpoint,
          event_types: after.event_types,
          role: after.role,
          enabled: after.enabled,
          version: after.version,
        },
      );
      await rt.engine.refresh();
      return after;
    },
  }),
  route({
    ...beta,
    method: 'DELETE',
    path: `${P}/subscriptions/{id}`,
    operationId: 'eventingDeleteSubscription',
    summary: 'Delete a subscription and its deliveries',
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.delete',
    params: IdParams,
    query: DeleteQuery,
    status: 204,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const gone = await ctx.services.store.withTenant(tenant, async (tx) => {
        const cur = await getSubscription(tx, tenant, ctx.params.id);
        if (ctx.query.version !== undefined && cur.version !== ctx.query.version)
          throw errors.conflict(`version mismatch: the subscription ` + `is at version ${cur.version}`);
        return deleteSubscription(tx, tenant, ctx.params.id);
      });
      await ctx.audit({ kind: 'event_subscription', id: gone.id }, { name: gone.name });
      await ctx.services.eventing?.engine.refresh();
      return reply.empty(204);
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: `${P}/subscriptions/{id}/rotate-secret`,
    operationId: 'eventingRotateSecret',
    summary: 'Issue a new signing secret (in this answer only); the old one signs beside it for 24 h',
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.rotate_secret',
    params: IdParams,
    response: SubscriptionWithSecret,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const { subscription, secret } = await ctx.services.store.withTenant(tenant, (tx) =>
        rotateSecret(tx, ctx.services.sealer, tenant, ctx.params.id),
      );
      await ctx.audit(
        { kind: 'event_subscription', id: subscription.id },
        { previous_secret_expires_at: subscription.previous_secret_expires_at },
      );
      await rt.engine.refresh();
      return { ...subscription, secret };
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: `${P}/subscriptions/{id}/test`,
    operationId: 'eventingTestSubscription',
    summary: 'Send one signed test delivery (`subscription.tested`) now and answer how it went',
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.test',
    params: IdParams,
    response: TestAnswer,
    timeoutMs: 130_000,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const row = await ctx.services.store.withTenant(tenant, (tx) => readSubscriptionRow(tx, tenant, ctx.params.id));
      if (!row) throw errors.notFound('subscription');
      const event = {
        id: newId(),
        type: 'subscription.tested',
        source: '/svc/eventing',
        subject: `subscription/${row.id}`,
        time: nowTimestamp(),
        tenant,
        data: { subscription_id: row.id, message: 'a test delivery ' + 'from svc' },
      };
      const target = rt.target(row);
      const outcome = await target.send({ deliveryId: event.id, tenant, laneId: row.id, attempt: 1, event }).finally(() => target.close());
      const delivery = await ctx.services.store.withTenant(tenant, (tx) => recordFinished(tx, tenant, row.id, event, 'test', outcome));
      await ctx.audit(
        { kind: 'event_subscription', id: row.id },
        { delivery_id: delivery.id, status: delivery.status, http_status: delivery.last_status },
      );
      return { delivery };
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: `${P}/subscriptions/{id}/replay`,
    operationId: 'eventingReplay',
    summary: `Queue the subscription's events of a sequence range again (at most ${REPLAY_MAX} per call)`,
    permission: 'eventing:subscription:write',
    audit: 'eventing.subscription.replay',
    params: IdParams,
    body: ReplayBody,
    response: ReplayAnswer,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const out = await ctx.services.store.withTenant(tenant, async (tx) => {
        const sub = await getSubscription(tx, tenant, ctx.params.id);
        const to = ctx.body.to_seq ?? sub.cursor_seq;
        if (to < ctx.body.from_seq) throw errors.badRequest('to_seq is before from_seq');
        const types = sub.event_types.filter((t) => rt.mayReceive(sub.role, t));
        const events = await readEvents(tx, tenant, ctx.body.from_seq - 1, REPLAY_MAX + 1, types, Math.min(to, sub.cursor_seq));
        const truncated = events.length > REPLAY_MAX;
        const queued = await queueDeliveries(tx, tenant, sub.id, events.slice(0, REPLAY_MAX), 'replay');
        return { queued, from_seq: ctx.body.from_seq, to_seq: to, truncated };
      });
      await ctx.audit({ kind: 'event_subscription', id: ctx.params.id }, out);
      rt.engine.wakeLanes(tenant);
      return out;
    },
  }),
  route({
    ...beta,
    method: 'GET',
    path: `${P}/events`,
    operationId: 'eventingListEvents',
    summary: "The tenant's event log from a sequence cursor, only the types the caller's role may receive",
    permission: 'eventing:event:read',
    query: EventsQuery,
    response: EventPage,
    handler: async (ctx) => {
      const rt = runtimeOf(ctx);
      const tenant = tenantOf(ctx);
      const limit = ctx.query.limit ?? 50;
      const after = ctx.query.after ?? 0;
      let types = rt.receivableTypes(callerRole(ctx));
      if (ctx.query.type) types = types.filter((t) => t === ctx.query.type);
      const rows = await ctx.services.store.withTenant(tenant, (tx) => readEvents(tx, tenant, after, limit + 1, types));
      const items = rows.slice(0, limit);
      // Logged events always carry their sequence, so each envelope matches the schema.
      return {
        items: items.map(cloudEvent) as Array<Static<typeof CloudEvent>>,
        has_more: rows.length > limit,
        next_after: items[items.length - 1]?.sequence ?? after,
      };
    },
  }),
  route({
    ...beta,
    method: 'GET',
    path: `${P}/deliveries`,
    operationId: 'eventingListDeliveries',
    summary: 'Deliveries, by subscription and status (queued, delivering, delivered, failed, dead)',
    permission: 'eventing:delivery:read',
    query: DeliveriesQuery,
    response: Page(Delivery),
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const limit = ctx.query.limit ?? 50;
      const after = ctx.query.cursor ? decodeCursor(ctx.query.cursor) : undefined;
      const rows = await ctx.services.store.withTenant(tenant, (tx) =>
        listDeliveries(tx, tenant, {
          limit,
          ...(after ? { after } : {}),
          ...(ctx.query.subscription_id ? { subscription_id: ctx.query.subscription_id } : {}),
          ...(ctx.query.status ? { status: ctx.query.status } : {}),
        }),
      );
      return pageOf(rows, limit);
    },
  }),
  route({
    ...beta,
    method: 'GET',
    path: `${P}/dead-letters`,
    operationId: 'eventingListDeadLetters',
    summary: 'Deliveries that ran out of attempts (`dead`)',
    permission: 'eventing:delivery:read',
    query: DeadLettersQuery,
    response: Page(Delivery),
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const limit = ctx.query.limit ?? 50;
      const after = ctx.query.cursor ? decodeCursor(ctx.query.cursor) : undefined;
      const rows = await ctx.services.store.withTenant(tenant, (tx) =>
        listDeliveries(tx, tenant, {
          limit,
          status: 'dead',
          ...(after ? { after } : {}),
          ...(ctx.query.subscription_id ? { subscription_id: ctx.query.subscription_id } : {}),
        }),
      );
      return pageOf(rows, limit);
    },
  }),
  route({
    ...beta,
    method: 'POST',
    path: `${P}/dead-letters/{id}/redeliver`,
    operationId: 'eventingRedeliver',
    summary: 'Requeue one dead delivery (its attempts start over)',
    permission: 'eventing:delivery:write',
    audit: 'eventing.delivery.redeliver',
    params: IdParams,
    response: Delivery,
    handler: async (ctx) => {
      const tenant = tenantOf(ctx);
      const d = await ctx.services.store.withTenant(tenant, async (tx) => {
        const done = await redeliver(tx, tenant, ctx.params.id);
        if (done) return done;
        if (await getDelivery(tx, tenant, ctx.params.id)) throw errors.conflict('only a dead delivery can be redelivered');
        throw errors.notFound('dead letter');
      });
      await ctx.audit({ kind: 'event_delivery', id: d.id }, { subscription_id: d.subscription_id, event_id: d.event_id });
      ctx.services.eventing?.engine.wakeLanes(tenant);
      return d;
    },
  }),
];
