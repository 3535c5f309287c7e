/**
 * The NATS JetStream binding of the bus (`SERVICE_BUS=nats`, `SERVICE_NATS_URL`; docs/eventing.md
 * "Several replicas"). Every event this replica announces (after its commit) is published to the
 * stream `SVC_EVENTS` on `svc.events.<tenant>.<type>` with the event id as the JetStream message id
 * (duplicates inside the stream's 2-minute window are dropped); every replica reads the stream with
 * an ordered consumer from "now" and hands the events of other replicas to its own subscribers —
 * among them eventing, which wakes its dispatchers at once instead of at the next poll.
 *
 * The stream is a notification channel, not the record: the durable event log and the delivery
 * rows are in the shared Postgres, so a replica that misses messages (a restart, NATS down) loses
 * nothing — its 1-second poll of the log covers them — and deliveries are claimed there, once per
 * subscription across replicas, under leases that another replica takes over when one dies.
 */
import type { Logger } from 'pino';
import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { newId } from '../store/ids.js';
import type { EventBus, RemoteBinding } from './bus.js';
import type { BusEvent } from './event-types.js';

export const STREAM = 'SVC_EVENTS';
const SUBJECT_ROOT = 'svc.events';

/** NATS subject tokens may not hold `.`, `*`, `>` or whitespace; tenant ids and types are checked, but never trusted. */
const token = (s: string) => s.replace(/[.*>\s]/g, '_');

export class NatsBinding implements RemoteBinding {
  readonly kind = 'nats' as const;
  readonly origin = newId();
  #connected = false;
  #published = 0;
  #received = 0;
  #failed = 0;
  private constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger | undefined,
    readonly servers: string[],
  ) {}

  /** Connects (fails clearly when NATS is unreachable), makes sure the stream exists, and starts reading it into `bus`. */
  static async start(bus: EventBus, servers: string[], log?: Logger): Promise<NatsBinding> {
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers,
        name: 'svc-serve',
        timeout: 5_000,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1_000,
      });
    } catch (err) {
      throw new Error(`NATS at ${servers.join(', ')} is unreachable (SERVICE_NATS_URL): ${(err as Error).message}`);
    }
    const b = new NatsBinding(nc, log, servers);
    b.#connected = true;
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      const cfg = {
        name: STREAM,
        subjects: [`${SUBJECT_ROOT}.>`],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        max_age: nanos(3_600_000),
        duplicate_window: nanos(120_000),
      };
      await jsm.streams.info(STREAM).then(
        () => jsm.streams.update(STREAM, { subjects: cfg.subjects, max_age: cfg.max_age, duplicate_window: cfg.duplicate_window }),
        () => jsm.streams.add(cfg),
      );
      const consumer = await jetstream(nc).consumers.get(STREAM, { deliver_policy: DeliverPolicy.New });
      const messages = await consumer.consume();
      void (async () => {
        for await (const m of messages) {
          if (m.headers?.get('svc-origin') === b.origin) continue;
          try {
            b.#received++;
            bus.announceRemote([m.json<BusEvent>()]);
          } catch (err) {
            b.#failed++;
            log?.warn({ err }, 'bus: an event from NATS could not be read');
          }
        }
      })();
    } catch (err) {
      await nc.close().catch(() => undefined);
      throw new Error(`NATS at ${servers.join(', ')} has no usable JetStream (is the server started with -js?): ${(err as Error).message}`);
    }
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          b.#connected = false;
          log?.warn(
            { servers },
            'bus: NATS disconnected; reconnecting (deliveries go on from the store; other replicas are heard again on reconnect)',
          );
        } else if (s.type === 'reconnect') {
          b.#connected = true;
          log?.info({ servers }, 'bus: NATS reconnected');
        }
      }
    })();
    bus.bind(b);
    log?.info({ servers, stream: STREAM, origin: b.origin }, 'bus: NATS JetStream binding ready');
    return b;
  }

  /** Publishes events this replica announced; never throws (a failure is counted and logged: the log in the store is the record). */
  publish(events: readonly BusEvent[]): void {
    const js = jetstream(this.nc);
    for (const e of events) {
      const h = natsHeaders();
      h.set('svc-origin', this.origin);
      js.publish(`${SUBJECT_ROOT}.${token(e.tenant)}.${token(e.type)}`, JSON.stringify(e), { msgID: e.id, headers: h }).then(
        () => void this.#published++,
        (err: unknown) => {
          this.#failed++;
          this.log?.warn({ err: (err as Error).message, event_id: e.id }, 'bus: publishing an event to NATS failed');
        },
      );
    }
  }

  status(): { kind: 'nats'; connected: boolean; servers: string[]; published: number; received: number; failed: number } {
    return {
      kind: 'nats',
      connected: this.#connected && !this.nc.isClosed(),
      servers: this.servers,
      published: this.#published,
      received: this.#received,
      failed: this.#failed,
    };
  }

  async close(): Promise<void> {
    await this.nc.drain().catch(() => undefined);
  }
}
