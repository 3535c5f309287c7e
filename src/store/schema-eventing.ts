/** Kysely table types of eventing (migration 23): the durable event log, subscriptions, deliveries. */
import type { ColumnType } from 'kysely';

/** bigint on Postgres comes back as a string; written as a number. */
type Big = ColumnType<number | string, number, number>;
type BigNull = ColumnType<number | string | null, number | null, number | null>;

/** `event_seqs`: the last sequence number handed out per tenant (row lock = commit order on Postgres). */
export interface EventSeqsTable {
  tenant_id: string;
  last_seq: Big;
}

/** `events`: the durable event log, one CloudEvents envelope per row, written in its change's transaction. */
export interface EventsTable {
  tenant_id: string;
  /** per-tenant sequence, from 1, dense among committed rows */
  seq: Big;
  /** UUIDv7, the CloudEvents id and the webhook-id */
  id: string;
  type: string;
  source: string;
  subject: string;
  time: string;
  /** JSON object */
  data: string;
  traceparent: string | null;
  created_at: string;
}

/** `event_subscriptions`: a webhook receiver of one tenant. Secrets and credentials are sealed. */
export interface EventSubscriptionsTable {
  id: string;
  tenant_id: string;
  name: string;
  enabled: number;
  /** JSON array of event types */
  event_types: string;
  endpoint: string;
  ca_pem: string | null;
  pin_sha256: string | null;
  sink_format: string;
  /** `bearer`, `basic`, `header` or null */
  auth_kind: string | null;
  /** header name when `auth_kind = header` (not secret) */
  auth_header: string | null;
  auth_sealed: string | null;
  auth_hint: string | null;
  secret_sealed: string;
  /** the previous secret, still signing until `previous_expires_at` (rotation grace window) */
  previous_secret_sealed: string | null;
  previous_expires_at: string | null;
  max_attempts: number;
  initial_interval_s: number;
  timeout_ms: number;
  /** role ceiling: the subscription receives only event types this role may read */
  role: string;
  created_by: string;
  /** events with a sequence up to this one have been turned into deliveries (the dispatcher's cursor) */
  cursor_seq: Big;
  version: number;
  created_at: string;
  updated_at: string;
}

/** `event_deliveries`: one attempt series of one event (or test) to one subscription; durable. */
export interface EventDeliveriesTable {
  id: string;
  tenant_id: string;
  subscription_id: string;
  event_id: string;
  /** the event's sequence; 0 for a test delivery */
  event_seq: Big;
  /** `event`, `test`, `replay` */
  kind: string;
  /** the envelope of a test delivery (other kinds read the log) */
  payload: string | null;
  /** `queued`, `delivering`, `delivered`, `failed`, `dead` */
  status: string;
  attempts: number;
  /** epoch ms when the next attempt is due */
  due_at: Big;
  /** epoch ms until which a `delivering` claim holds; after it another worker may take it */
  lease_until: BigNull;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
}

/** Egress control (migration 30): one row, id 1; written only by the operator commands. */
export interface EgressSettingsTable {
  id: number;
  mode: 'compatibility' | 'enforced';
  fence_armed: number;
  updated_at: string;
}

/** Allowed destination hosts (`host` or `host:port`, lower case) of the egress policy and fence. */
export interface EgressAllowlistTable {
  host: string;
  created_at: string;
}

export interface EventingTables {
  egress_settings: EgressSettingsTable;
  egress_allowlist: EgressAllowlistTable;
  event_seqs: EventSeqsTable;
  events: EventsTable;
  event_subscriptions: EventSubscriptionsTable;
  event_deliveries: EventDeliveriesTable;
}

export const EVENTING_TENANT_TABLES = ['event_seqs', 'events', 'event_subscriptions', 'event_deliveries'] as const;
export const EVENTING_GLOBAL_TABLES = ['egress_settings', 'egress_allowlist'] as const;

/** Postgres grants of the app role (postgres-roles.ts). */
export const EVENTING_APP_ROLE_GRANTS = {
  // read-only for the app: a compromised app path cannot widen the allowlist or disarm the fence
  egress_settings: ['select'],
  egress_allowlist: ['select'],
  event_seqs: ['select', 'insert', 'update'],
  // retention deletes old events; an erasure redacts a person's identifiers from their data (docs/compliance.md)
  events: ['select', 'insert', 'update', 'delete'],
  event_subscriptions: ['select', 'insert', 'update', 'delete'],
  event_deliveries: ['select', 'insert', 'update', 'delete'],
} as const;
