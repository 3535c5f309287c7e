/**
 * Core routes of output connectors (stable; `system:admin`): `GET|PUT|DELETE /v1/console/connectors`,
 * `POST /v1/console/connectors/test`, `GET /v1/connectors/health`. Connectors are server
 * administration: one connector serves one tenant or every tenant, so its configuration is global
 * and reached by the system administrator only. Every mutation is audited on the system chain.
 */
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import type { Principal } from '../../auth/principal.js';
import type { Services } from '../../serve/services.js';
import { connectorDeliveries, redeliverBatches } from './deliveries.js';
import { deleteConnector, getConnector, listConnectors, putConnector, validateConnector, type ConnectorInput } from './connector-store.js';
import { isDurable } from '../../events/event-types.js';
import { connectorHealth } from './health.js';
import {
  ConnectorIn,
  ConnectorOut,
  DeliveryOut,
  HealthOut,
  HealthQuery,
  ListQuery,
  NameQuery,
  RedeliverIn,
  RedeliverOut,
  TestIn,
  TestOut,
} from './schemas.js';
import Type from 'typebox';
import { testDelivery } from './test-delivery.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };

function principalOf(ctx: { principal?: Principal }): Principal {
  if (!ctx.principal) throw errors.unauthenticated();
  return ctx.principal;
}

export const connectorRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/connectors',
    operationId: 'listConnectors',
    summary: 'Output connectors (one by name); with name and deliveries, its deliveries too',
    query: ListQuery,
    response: Type.Object(
      { items: Type.Array(ConnectorOut), deliveries: Type.Optional(Type.Array(DeliveryOut)) },
      { additionalProperties: false },
    ),
    handler: async (ctx) => {
      const s = ctx.services;
      if (ctx.query.name === undefined) {
        if (ctx.query.deliveries !== undefined) throw errors.badRequest('deliveries needs name (the connector whose deliveries to list)');
        return { items: await listConnectors(s.store) };
      }
      const c = await getConnector(s.store, ctx.query.name);
      if (!c) throw errors.notFound('connector');
      if (ctx.query.deliveries === undefined) return { items: [c] };
      const status = ctx.query.deliveries === 'all' ? undefined : ctx.query.deliveries;
      return { items: [c], deliveries: await connectorDeliveries(s.store, c.id, status, ctx.query.limit ?? 50) };
    },
  }),
  route({
    ...common,
    method: 'PUT',
    path: '/v1/console/connectors',
    operationId: 'putConnector',
    summary: 'Create or replace an output connector by name; validated against its kind (format token, config schema, secret references)',
    audit: 'connector.put',
    auditChain: 'system',
    body: ConnectorIn,
    response: ConnectorOut,
    bodyLimit: 64 * 1024,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const s = ctx.services;
      const known = (t: string) => {
        const d = s.events.catalog.get(t);
        return d === undefined ? false : isDurable(d) || 'in-process';
      };
      const values = await validateConnector(s.store, ctx.body as ConnectorInput, known);
      const { view, created } = await putConnector(s.store, values);
      await ctx.audit(
        { kind: 'connector', id: view.name },
        {
          created,
          kind: view.kind,
          tenant: view.tenant,
          format: view.format,
          enabled: view.enabled,
          sources: view.sources,
          secret_refs: view.secret_refs,
          version: view.version,
        },
      );
      await s.connectors?.refresh().catch(() => undefined);
      return view;
    },
  }),
  route({
    ...common,
    method: 'DELETE',
    path: '/v1/console/connectors',
    operationId: 'deleteConnector',
    summary: 'Delete an output connector with its cursors and deliveries',
    audit: 'connector.delete',
    auditChain: 'system',
    query: NameQuery,
    status: 204,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const s = ctx.services;
      // Stop its lanes before the rows go (a running lane would recreate its cursor).
      const c = await getConnector(s.store, ctx.query.name);
      if (!c) throw errors.notFound('connector');
      await s.store.transaction((tx) =>
        tx
          .updateTable('connectors')
          .set({ enabled: 0, version: c.version + 1 })
          .where('id', '=', c.id)
          .execute(),
      );
      await s.connectors?.refresh().catch(() => undefined);
      await deleteConnector(s.store, ctx.query.name);
      await ctx.audit({ kind: 'connector', id: c.name }, { kind: c.kind, tenant: c.tenant });
      await s.connectors?.refresh().catch(() => undefined);
      return reply.empty(204);
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/console/connectors/test',
    operationId: 'testConnector',
    summary: "Send one test event through the connector's receiver now (a real delivery; the outcome is returned, not retried)",
    audit: 'connector.test',
    auditChain: 'system',
    body: TestIn,
    response: TestOut,
    timeoutMs: 30_000,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const s = ctx.services;
      const c = await getConnector(s.store, ctx.body.name);
      if (!c) throw errors.notFound('connector');
      const out = await testDelivery(s.store, s.sealer, s.dataDir, s.build.version, c);
      await ctx.audit({ kind: 'connector', id: c.name }, { result: out.result, error: out.error });
      return out;
    },
  }),
  route({
    ...common,
    method: 'POST',
    path: '/v1/console/connectors/redeliver',
    operationId: 'redeliverConnector',
    summary: "Requeue a connector's dead delivery batches (one by batch_id, or all): attempts start over, seq ranges kept",
    audit: 'connector.redeliver',
    auditChain: 'system',
    body: RedeliverIn,
    response: RedeliverOut,
    handler: async (ctx) => {
      const p = principalOf(ctx);
      const s = ctx.services;
      const c = await getConnector(s.store, ctx.body.name);
      if (!c) throw errors.notFound('connector');
      const out = await redeliverBatches(s.store, c.id, ctx.body.batch_id);
      if ('kind' in out) {
        if (out.kind === 'not-dead')
          throw errors.conflict(`only a dead batch can be redelivered; batch ${ctx.body.batch_id ?? ''} is ${out.status}`);
        throw errors.notFound('delivery batch');
      }
      await ctx.audit(
        { kind: 'connector', id: c.name },
        {
          batch_id: ctx.body.batch_id ?? null,
          count: out.requeued.length,
          batches: out.requeued.slice(0, 100).map((d) => ({ id: d.id, tenant: d.tenant, from_seq: d.from_seq, to_seq: d.to_seq })),
        },
      );
      for (const chain of out.chains) s.connectors?.engine.wakeLanes(chain);
      return { name: c.name, requeued: out.requeued };
    },
  }),
  route({
    stability: 'stable' as const,
    tags: ['connectors'],
    permission: 'system:admin',
    method: 'GET',
    path: '/v1/connectors/health',
    operationId: 'connectorsHealth',
    summary: 'Per connector: running, failed, stopped or disabled, last success, last error, forwarder lag, dead letters; and a summary',
    query: HealthQuery,
    response: HealthOut,
    timeoutMs: 15_000,
    handler: async (ctx) => {
      const h = await connectorHealth(ctx.services.store, ctx.services.connectors, ctx.query.name);
      if (ctx.query.name !== undefined && h.items.length === 0) throw errors.notFound('connector');
      return h;
    },
  }),
];
