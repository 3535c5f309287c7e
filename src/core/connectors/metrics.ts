/**
 * Prometheus metrics of the connectors (on the server's registry, `/metrics`): the forwarder's lag in
 * records and seconds per connector and tenant, the connector state, records delivered and failed
 * attempts. Lag and state are read from the health computation at scrape time.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface LagSample {
  connector: string;
  tenant: string;
  records: number;
  seconds: number;
}

export interface MetricsSource {
  lags: LagSample[];
  states: Array<{ connector: string; state: string }>;
  dead: Array<{ connector: string; count: number }>;
}

export const CONNECTOR_STATES = ['running', 'failed', 'stopped', 'disabled'] as const;

export class ConnectorMetrics {
  readonly #records: Counter<'connector'>;
  readonly #failedAttempts: Counter<'connector'>;
  #source: (() => Promise<MetricsSource>) | undefined;
  #pending: Promise<MetricsSource | undefined> | undefined;

  constructor(registry: Registry) {
    const read = (): Promise<MetricsSource | undefined> => {
      // One health read per scrape, shared by the gauges.
      this.#pending ??= (this.#source?.() ?? Promise.resolve(undefined))
        .catch(() => undefined)
        .finally(() => setTimeout(() => (this.#pending = undefined), 0));
      return this.#pending;
    };
    new Gauge({
      name: 'svc_connector_lag_records',
      help: 'Ledger records of a tenant not yet delivered by a forwarding connector (head seq minus delivered seq).',
      labelNames: ['connector', 'tenant'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const l of (await read())?.lags ?? []) this.set({ connector: l.connector, tenant: l.tenant }, l.records);
      },
    });
    new Gauge({
      name: 'svc_connector_lag_seconds',
      help: 'Age of the oldest ledger record a forwarding connector has not delivered yet (0 when caught up).',
      labelNames: ['connector', 'tenant'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const l of (await read())?.lags ?? []) this.set({ connector: l.connector, tenant: l.tenant }, l.seconds);
      },
    });
    new Gauge({
      name: 'svc_connector_state',
      help: 'Connector state: 1 for the current one of running, failed, stopped, disabled.',
      labelNames: ['connector', 'state'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const s of (await read())?.states ?? [])
          for (const st of CONNECTOR_STATES) this.set({ connector: s.connector, state: st }, s.state === st ? 1 : 0);
      },
    });
    new Gauge({
      name: 'svc_connector_dead_letters',
      help: 'Dead deliveries (out of attempts) of a connector, awaiting redelivery.',
      labelNames: ['connector'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const d of (await read())?.dead ?? []) this.set({ connector: d.connector }, d.count);
      },
    });
    this.#records = new Counter({
      name: 'svc_connector_records_delivered_total',
      help: 'Records a connector delivered (a receiver took them).',
      labelNames: ['connector'] as const,
      registers: [registry],
    });
    this.#failedAttempts = new Counter({
      name: 'svc_connector_attempts_failed_total',
      help: 'Delivery attempts of a connector that did not deliver.',
      labelNames: ['connector'] as const,
      registers: [registry],
    });
  }

  setSource(fn: () => Promise<MetricsSource>): void {
    this.#source = fn;
  }

  delivered(connector: string, n: number): void {
    this.#records.inc({ connector }, n);
  }

  attemptFailed(connector: string): void {
    this.#failedAttempts.inc({ connector });
  }
}
