/**
 * Subscriptions of a tenant: create (the signing secret is returned once), read, list, update in
 * place (PUT; the secret stays), delete (its deliveries go with it), rotate-secret (a new secret,
 * returned once; the old one keeps signing beside it for the grace window, 24 h by default, so a
 * receiver can switch over without a lost delivery). Secrets and receiver credentials are sealed
 * (src/secrets/sealing.ts) with the subscription's id as associated data and never returned.
 */
import type { Transaction } from 'kysely';
import { errors } from '../../contract/errors.js';
import { isUniqueViolation } from '../../store/store-error.js';
import { formatTimestamp, nowTimestamp } from '../../ledger/time.js';
import { lastSeq } from '../../events/event-log.js';
import { newWebhookSecret } from '../../events/delivery/signature.js';
import { secretHint, type Sealer } from '../../secrets/sealing.js';
import { newId } from '../../store/ids.js';
import type { Database } from '../../store/schema.js';
import type { EventSubscriptionsTable } from '../../store/schema-eventing.js';

type Tx = Transaction<Database>;

/** How long the old secret keeps signing after a rotation. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

export type ReceiverAuth =
  | { kind: 'bearer'; token: string }
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'header'; name: string; value: string };

/** What a create or an update sets. */
export interface SubscriptionInput {
  name: string;
  enabled?: boolean;
  event_types: string[];
  endpoint: string;
  ca_pem?: string | null;
  pin_sha256?: string | null;
  sink_format: string;
  /** undefined on update: keep the stored one; null: remove it */
  auth?: ReceiverAuth | null;
  retry?: { max_attempts?: number; initial_interval_s?: number };
  timeout_ms?: number;
  role: string;
}

/** A subscription as served (no secret, no credential). */
export interface Subscription {
  id: string;
  name: string;
  enabled: boolean;
  event_types: string[];
  endpoint: string;
  ca_pem: string | null;
  pin_sha256: string | null;
  sink_format: string;
  auth: { kind: string; header?: string; hint: string } | null;
  retry: { max_attempts: number; initial_interval_s: number };
  timeout_ms: number;
  role: string;
  created_by: string;
  cursor_seq: number;
  /** while the previous secret still signs (after a rotation) */
  previous_secret_expires_at: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export type SubscriptionRow = { [K in keyof EventSubscriptionsTable]: unknown } & { id: string; tenant_id: string };

export const DEFAULT_RETRY = { max_attempts: 12, initial_interval_s: 30 } as const;
export const DEFAULT_TIMEOUT_MS = 10_000;

export function toSubscription(r: SubscriptionRow): Subscription {
  return {
    id: r.id,
    name: String(r.name),
    enabled: Number(r.enabled) === 1,
    event_types: JSON.parse(String(r.event_types)) as string[],
    endpoint: String(r.endpoint),
    ca_pem: (r.ca_pem as string | null) ?? null,
    pin_sha256: (r.pin_sha256 as string | null) ?? null,
    sink_format: String(r.sink_format),
    auth: r.auth_kind
      ? { kind: String(r.auth_kind), ...(r.auth_header ? { header: String(r.auth_header) } : {}), hint: String(r.auth_hint ?? '') }
      : null,
    retry: { max_attempts: Number(r.max_attempts), initial_interval_s: Number(r.initial_interval_s) },
    timeout_ms: Number(r.timeout_ms),
    role: String(r.role),
    created_by: String(r.created_by),
    cursor_seq: Number(r.cursor_seq),
    previous_secret_expires_at:
      r.previous_secret_sealed && r.previous_expires_at && String(r.previous_expires_at) > nowTimestamp()
        ? String(r.previous_expires_at)
        : null,
    version: Number(r.version),
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
  };
}

/** The credential's secret part, for sealing, and its hint. */
function authSecret(a: ReceiverAuth): { secret: string; header: string | null } {
  if (a.kind === 'bearer') return { secret: a.token, header: null };
  if (a.kind === 'basic') return { secret: `${a.username}:${a.password}`, header: null };
  return { secret: a.value, header: a.name };
}

/** The request headers a receiver credential adds. */
export function authHeaders(kind: string | null, header: string | null, secret: string | null): Record<string, string> {
  if (!kind || secret === null) return {};
  if (kind === 'bearer') return { authorization: `Bearer ${secret}` };
  if (kind === 'basic') return { authorization: `Basic ${Buffer.from(secret, 'utf8').toString('base64')}` };
  return { [String(header).toLowerCase()]: secret };
}

function settings(input: SubscriptionInput) {
  return {
    name: input.name,
    enabled: input.enabled === false ? 0 : 1,
    event_types: JSON.stringify([...new Set(input.event_types)].sort()),
    endpoint: input.endpoint,
    ca_pem: input.ca_pem ?? null,
    pin_sha256: input.pin_sha256 ?? null,
    sink_format: input.sink_format,
    max_attempts: input.retry?.max_attempts ?? DEFAULT_RETRY.max_attempts,
    initial_interval_s: input.retry?.initial_interval_s ?? DEFAULT_RETRY.initial_interval_s,
    timeout_ms: input.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    role: input.role,
  };
}

const conflictOnName = (err: unknown): never => {
  if (isUniqueViolation(err)) throw errors.conflict('another subscription of this tenant has that name');
  throw err;
};

/** Creates a subscription starting at the tenant's current sequence (earlier events: replay); returns it with its secret. */
export async function createSubscription(
  tx: Tx,
  sealer: Sealer,
  tenant: string,
  createdBy: string,
  input: SubscriptionInput,
): Promise<{ subscription: Subscription; secret: string }> {
  const id = newId();
  const now = nowTimestamp();
  const secret = newWebhookSecret();
  const auth = input.auth ? authSecret(input.auth) : undefined;
  const row = {
    id,
    tenant_id: tenant,
    ...settings(input),
    auth_kind: input.auth?.kind ?? null,
    auth_header: auth?.header ?? null,
    auth_sealed: auth ? sealer.seal(auth.secret, id) : null,
    auth_hint: auth ? secretHint(auth.secret) : null,
    secret_sealed: sealer.seal(secret, id),
    previous_secret_sealed: null,
    previous_expires_at: null,
    created_by: createdBy,
    cursor_seq: await lastSeq(tx, tenant),
    version: 1,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('event_subscriptions').values(row).execute().catch(conflictOnName);
  return { subscription: toSubscription(row), secret };
}

export async function readSubscriptionRow(tx: Tx, tenant: string, id: string): Promise<SubscriptionRow | undefined> {
  return (await tx
    .selectFrom('event_subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenant)
    .where('id', '=', id)
    .executeTakeFirst()) as SubscriptionRow | undefined;
}

export async function getSubscription(tx: Tx, tenant: string, id: string): Promise<Subscription> {
  const r = await readSubscriptionRow(tx, tenant, id);
  if (!r) throw errors.notFound('subscription');
  return toSubscription(r);
}

export async function listSubscriptions(tx: Tx, tenant: string, after: string | undefined, limit: number): Promise<Subscription[]> {
  let q = tx.selectFrom('event_subscriptions').selectAll().where('tenant_id', '=', tenant);
  if (after) q = q.where('id', '>', after);
  return (await q.orderBy('id').limit(limit + 1).execute()).map((r) => toSubscription(r as SubscriptionRow));
}

/** Edits in place; `version` must be current (409 otherwise). The signing secret is untouched. */
export async function updateSubscription(
  tx: Tx,
  sealer: Sealer,
  tenant: string,
  id: string,
  version: number,
  input: SubscriptionInput,
): Promise<{ before: Subscription; after: Subscription }> {
  const cur = await readSubscriptionRow(tx, tenant, id);
  if (!cur) throw errors.notFound('subscription');
  if (Number(cur.version) !== version) throw errors.conflict(`version mismatch: the subscription is at version ${String(cur.version)}`);
  const auth = input.auth ? authSecret(input.auth) : undefined;
  const authCols =
    input.auth === undefined
      ? {}
      : {
          auth_kind: input.auth?.kind ?? null,
          auth_header: auth?.header ?? null,
          auth_sealed: auth ? sealer.seal(auth.secret, id) : null,
          auth_hint: auth ? secretHint(auth.secret) : null,
        };
  const set = { ...settings(input), ...authCols, version: version + 1, updated_at: nowTimestamp() };
  const res = await tx
    .updateTable('event_subscriptions')
    .set(set)
    .where('tenant_id', '=', tenant)
    .where('id', '=', id)
    .where('version', '=', version)
    .executeTakeFirst()
    .catch(conflictOnName);
  if (Number(res.numUpdatedRows) !== 1) throw errors.conflict('version mismatch: the subscription changed concurrently');
  return { before: toSubscription(cur), after: toSubscription({ ...cur, ...set } as SubscriptionRow) };
}

/** Deletes a subscription and its deliveries. */
export async function deleteSubscription(tx: Tx, tenant: string, id: string): Promise<Subscription> {
  const cur = await readSubscriptionRow(tx, tenant, id);
  if (!cur) throw errors.notFound('subscription');
  await tx.deleteFrom('event_deliveries').where('tenant_id', '=', tenant).where('subscription_id', '=', id).execute();
  await tx.deleteFrom('event_subscriptions').where('tenant_id', '=', tenant).where('id', '=', id).execute();
  return toSubscription(cur);
}

/** A new signing secret (returned once); the current one signs beside it until the grace window ends. */
export async function rotateSecret(
  tx: Tx,
  sealer: Sealer,
  tenant: string,
  id: string,
  graceMs = ROTATION_GRACE_MS,
): Promise<{ subscription: Subscription; secret: string }> {
  const cur = await readSubscriptionRow(tx, tenant, id);
  if (!cur) throw errors.notFound('subscription');
  const secret = newWebhookSecret();
  const set = {
    secret_sealed: sealer.seal(secret, id),
    previous_secret_sealed: String(cur.secret_sealed),
    previous_expires_at: formatTimestamp(BigInt(Date.now() + graceMs) * 1_000_000n),
    version: Number(cur.version) + 1,
    updated_at: nowTimestamp(),
  };
  await tx.updateTable('event_subscriptions').set(set).where('tenant_id', '=', tenant).where('id', '=', id).execute();
  return { subscription: toSubscription({ ...cur, ...set } as SubscriptionRow), secret };
}

/** The secrets that sign now: the current one, then the previous one inside its grace window. */
export function signingSecrets(sealer: Sealer, r: SubscriptionRow, now = nowTimestamp()): string[] {
  const out = [sealer.open(String(r.secret_sealed), r.id)];
  if (r.previous_secret_sealed && r.previous_expires_at && String(r.previous_expires_at) > now)
    out.push(sealer.open(String(r.previous_secret_sealed), r.id));
  return out;
}
