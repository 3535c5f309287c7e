/**
 * Eventing at run time: the delivery engine with one lane per enabled subscription, woken by the bus,
 * the role filter (a subscription receives only the event types its role ceiling may read), and
 * the retention of the event log. Built once by the composition root (`services.eventing`).
 */
import type { Logger } from 'pino';
import { permissionRule, roleAtLeast, isRole, type PermissionRule, type Role } from '../../auth/roles.js';
import type { EventBus } from '../../events/bus.js';
import type { RecordHooks } from '../../contract/record-hooks.js';
import { lastSeq, purgeExpired, readEvents, retentionMs } from '../../events/event-log.js';
import type { BusEvent, EventCatalog } from '../../events/event-types.js';
import { DeliveryEngine } from '../../events/delivery/engine.js';
import { queueClaimed, queueMany } from '../../events/delivery/delivery-store.js';
import type { Claimed } from '../../events/delivery/target.js';
import type { DispatchGroup, HandOffer, Lane } from '../../events/delivery/target.js';
import type { Sealer } from '../../secrets/sealing.js';
import type { Store } from '../../store/store.js';
import { nowTimestamp } from '../../ledger/time.js';
import { egressRefusal } from './egress.js';
import { authHeaders, signingSecrets, type SubscriptionRow } from './subscription-store.js';
import { sharedAgent, WebhookTarget } from './webhook-target.js';

export interface EventingOptions {
  store: Store;
  sealer: Sealer;
  bus: EventBus;
  log: Logger;
  version: string;
  /** the server's permission rules (privileged reads need editor); absent: the default rule per permission */
  rules?: () => readonly PermissionRule[];
  pollMs?: number;
  /** record hooks: retention skips the events a delete guard (a legal hold) refuses */
  hooks?: RecordHooks;
}

/** Events one dispatch reads (times the subscriptions: the rows it may queue in one transaction). */
const DISPATCH_BATCH = 200;

export class EventingRuntime {
  readonly engine: DeliveryEngine;
  readonly catalog: EventCatalog;
  readonly #o: EventingOptions;
  readonly #warnedOtlp = new Set<string>();
  readonly #groups = new Map<string, DispatchGroup>();
  readonly #agent = sharedAgent();
  #unsubscribe: (() => void) | undefined;
  #retention: NodeJS.Timeout | undefined;

  constructor(o: EventingOptions) {
    this.#o = o;
    this.catalog = o.bus.catalog;
    this.engine = new DeliveryEngine({
      store: o.store,
      log: o.log,
      loadLanes: () => this.#loadLanes(),
      ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
    });
  }

  async start(): Promise<void> {
    const retention = retentionMs();
    this.#unsubscribe = this.#o.bus.subscribe({ name: 'eventing', types: '*' }, (e) => this.engine.wake(e.tenant));
    await this.engine.start();
    const purge = (): void =>
      void purgeExpired(this.#o.store, retention, Date.now(), this.#o.hooks)
        .then((n) => n > 0 && this.#o.log.info({ events: n }, 'eventing: events past retention deleted'))
        .catch((err: unknown) => this.#o.log.warn({ err }, 'eventing: retention run failed'));
    purge();
    this.#retention = setInterval(purge, 3_600_000);
    this.#retention.unref();
  }

  async close(): Promise<void> {
    this.#unsubscribe?.();
    clearInterval(this.#retention);
    await this.engine.close();
    await this.#agent.destroy().catch(() => undefined);
  }

  /** True when `role` may read events of `type` (the type's permission, as the route table rules it). */
  mayReceive(role: string, type: string): boolean {
    const decl = this.catalog.get(type);
    if (!decl || !isRole(role)) return false;
    const rule = this.#o.rules?.().find((r) => r.permission === decl.permission) ?? permissionRule(decl.permission);
    if (rule.scope === 'system') return false;
    return rule.minRole === undefined || roleAtLeast(role as Role, rule.minRole);
  }

  /** The declared types a role may receive. */
  receivableTypes(role: string): string[] {
    return this.catalog.list().map((d) => d.type).filter((t) => this.mayReceive(role, t));
  }

  /** Builds the webhook target of a stored subscription (secrets opened here, never logged). */
  target(r: SubscriptionRow): WebhookTarget {
    const secrets = signingSecrets(this.#o.sealer, r);
    const expires = r.previous_expires_at ? String(r.previous_expires_at) : '';
    const authSecret = r.auth_sealed ? this.#o.sealer.open(String(r.auth_sealed), r.id) : null;
    const format = String(r.sink_format);
    if (format === 'otlp' && !this.#warnedOtlp.has(r.id)) {
      // OTLP rule 5: `otlp` is delivered as the envelope (the same bytes as otlp_envelope); said once per subscription.
      this.#warnedOtlp.add(r.id);
      this.#o.log.warn(
        { subscription: r.id, tenant: r.tenant_id, sink_format: format },
        'eventing: subscription sink_format "otlp" ' + 'delivers the OTLP envelope (same as otlp_envelope)',
      );
    }
    return new WebhookTarget({
      endpoint: String(r.endpoint),
      caPem: (r.ca_pem as string | null) ?? null,
      pinSha256: (r.pin_sha256 as string | null) ?? null,
      sinkFormat: format,
      timeoutMs: Number(r.timeout_ms),
      secrets: () => (secrets.length > 1 && nowTimestamp() >= expires ? secrets.slice(0, 1) : secrets),
      authHeaders: authHeaders((r.auth_kind as string | null) ?? null, (r.auth_header as string | null) ?? null, authSecret),
      version: this.#o.version,
      shared: this.#agent,
      egressRefusal: (endpoint) => egressRefusal(this.#o.store, endpoint),
    });
  }

  async #loadLanes(): Promise<Lane[]> {
    const { store } = this.#o;
    const tenants = await store.transaction((tx) => tx.selectFrom('tenants').select('id').where('deleted_at', 'is', null).execute());
    const lanes: Lane[] = [];
    for (const { id: tenant } of tenants) {
      const rows = (await store.withTenant(tenant, (tx) =>
        tx.selectFrom('event_subscriptions').selectAll().where('tenant_id', '=', tenant).where('enabled', '=', 1).execute(),
      )) as SubscriptionRow[];
      for (const r of rows) {
        try {
          lanes.push(this.#lane(r));
        } catch (err) {
          this.#o.log.error(
            { err, subscription: r.id },
            'eventing: subscription cannot run (its ' + 'sealed secret does not open with this key?)',
          );
        }
      }
    }
    return lanes;
  }

  #lane(r: SubscriptionRow): Lane {
    const tenant = r.tenant_id;
    const id = r.id;
    const timeout = Number(r.timeout_ms);
    return {
      id,
      tenant,
      name: String(r.name),
      maxAttempts: Number(r.max_attempts),
      initialIntervalS: Number(r.initial_interval_s),
      leaseMs: timeout + 5_000,
      revision: `${String(r.version)}`,
      target: this.target(r),
      group: this.#group(tenant),
    };
  }

  /**
   * The dispatcher of a tenant's subscriptions: one read of the log after the lowest cursor among
   * them, then each subscription's deliveries (the types its role may receive, after its own
   * cursor) queued in one multi-row insert, and the cursors moved, all in one transaction.
   */
  #group(tenant: string): DispatchGroup {
    let g = this.#groups.get(tenant);
    if (g) return g;
    g = {
      key: `webhooks:${tenant}`,
      tenant,
      dispatch: async (tx, laneIds, offers) => {
        let q = tx
          .selectFrom('event_subscriptions')
          .select(['id', 'cursor_seq', 'event_types', 'role', 'enabled'])
          .where('tenant_id', '=', tenant)
          .where('id', 'in', [...laneIds])
          .orderBy('id');
        // Two replicas dispatching one tenant take turns on Postgres; SQLite has one writer anyway.
        if (this.#o.store.capabilities.supportsConcurrentWriters) q = q.forUpdate();
        const upto = await lastSeq(tx, tenant);
        const behind = (await q.execute()).filter((s) => Number(s.enabled) === 1 && Number(s.cursor_seq) < upto);
        const queued = new Set<string>();
        if (behind.length === 0) return { queued, more: false };
        const wants = new Map(
          behind.map((s) => [s.id, new Set((JSON.parse(s.event_types) as string[]).filter((t) => this.mayReceive(s.role, t)))]),
        );
        const from = Math.min(...behind.map((s) => Number(s.cursor_seq)));
        const types = [...new Set([...wants.values()].flatMap((t) => [...t]))];
        const events: BusEvent[] = await readEvents(tx, tenant, from, DISPATCH_BATCH, types, upto);
        const more = events.length === DISPATCH_BATCH;
        const next = more ? (events[events.length - 1]?.sequence ?? upto) : upto;
        const rows: Array<{ laneId: string; event: BusEvent }> = [];
        for (const s of behind) {
          const cursor = Number(s.cursor_seq);
          const t = wants.get(s.id) as Set<string>;
          for (const e of events) if ((e.sequence ?? 0) > cursor && t.has(e.type)) rows.push({ laneId: s.id, event: e });
        }
        // Lanes with no open row but their own take their rows claimed: no claim round trip, one row write less.
        const takers = new Set<string>();
        const offered = offers ? behind.filter((s) => offers.has(s.id)).map((s) => s.id) : [];
        if (offers && offered.length > 0) {
          // No tenant filter, so SQLite walks the lane index (with one it scans the tenant's rows): the ids
          // are this tenant's subscriptions, and a row found only refuses the offer.
          const open = await tx
            .selectFrom('event_deliveries')
            .select(['id', 'subscription_id', 'lease_until'])
            .where('subscription_id', 'in', offered)
            .where('status', 'in', ['queued', 'delivering'])
            .execute();
          const mine = (r: (typeof open)[number]): boolean =>
            offers.get(r.subscription_id)?.owns({ id: r.id, lease_until: r.lease_until === null ? null : Number(r.lease_until) }) === true;
          const busy = new Set(open.filter((r) => !mine(r)).map((r) => r.subscription_id));
          for (const id of offered) if (!busy.has(id)) takers.add(id);
        }
        await queueMany(tx, tenant, takers.size === 0 ? rows : rows.filter((r) => !takers.has(r.laneId)));
        for (const r of rows) if (!takers.has(r.laneId)) queued.add(r.laneId);
        const handed = new Map<string, Claimed[]>();
        if (offers && takers.size > 0) {
          const leaseOf = (laneId: string): number => (offers.get(laneId) as HandOffer).leaseUntil;
          const claimed = rows.filter((r) => takers.has(r.laneId)).map((r) => ({ ...r, leaseUntil: leaseOf(r.laneId) }));
          const ids = await queueClaimed(tx, tenant, claimed);
          for (const r of claimed) {
            const id = ids.get(`${r.laneId}:${r.event.id}`);
            if (id === undefined) continue;
            const list = handed.get(r.laneId) ?? [];
            if (list.length === 0) handed.set(r.laneId, list);
            list.push({ id, attempt: 1, event: r.event });
          }
        }
        const moving = behind.filter((s) => Number(s.cursor_seq) < next).map((s) => s.id);
        if (moving.length > 0)
          await tx
            .updateTable('event_subscriptions')
            .set({ cursor_seq: next })
            .where('tenant_id', '=', tenant)
            .where('id', 'in', moving)
            .where('cursor_seq', '<', next)
            .execute();
        return { queued, more, handed };
      },
    };
    this.#groups.set(tenant, g);
    return g;
  }
}
