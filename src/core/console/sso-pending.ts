/**
 * Pending single sign-on logins (started, not yet completed) in the store, so every replica completes
 * any of them and a restart keeps them (table `sso_pending_logins`, migration 34). Unauthenticated
 * starts must not lock SSO for everybody (issue 48), so the pool is bounded twice:
 * - per client address (an IPv6 address by its /64): at most PER_CLIENT pending; beyond it the
 *   address's own oldest entry gives way once it is MIN_AGE_MS old, else the start is refused (429);
 * - overall: at most GLOBAL pending; beyond it the address holding the most gives way first, then the
 *   oldest anywhere, again only past MIN_AGE_MS.
 * A pending login expires after PENDING_TTL_MS; one completion consumes it (the delete decides).
 */
import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { ApiError } from '../../contract/errors.js';
import type { Store } from '../../store/store-types.js';

export const PENDING_TTL_MS = 10 * 60_000;
export const PER_CLIENT = 20;
export const GLOBAL = 20_000;
/** A pending login younger than this is never evicted: time for a person to sign in at the provider. */
export const MIN_AGE_MS = 60_000;

/** The bounds (the constants above; tests pass small ones). */
export interface PendingLimits {
  ttlMs: number;
  perClient: number;
  global: number;
  minAgeMs: number;
}
const LIMITS: PendingLimits = { ttlMs: PENDING_TTL_MS, perClient: PER_CLIENT, global: GLOBAL, minAgeMs: MIN_AGE_MS };

export interface PendingLogin {
  nonce: string;
  verifier: string;
  redirectUri: string;
  issuer: string;
  createdAtMs: number;
}

const digest = (state: string): string => createHash('sha256').update(state).digest('hex');

/** The key of the per-address bound: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64 prefix. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (!isIPv6(address)) return address.slice(0, 100) || 'unknown';
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

function refuse(scope: string, waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new ApiError('rate_limited', `too many single sign-on logins in progress ${scope}; try again in ${seconds} s`, {
    'retry-after': String(seconds),
  });
}

/** Admit a started login under the bounds, evicting what gives way; throws 429 `rate_limited` otherwise. */
export async function admitPending(
  store: Store,
  state: string,
  client: string,
  p: Omit<PendingLogin, 'createdAtMs'>,
  limits: PendingLimits = LIMITS,
  now = Date.now(),
): Promise<void> {
  const { ttlMs, perClient, global, minAgeMs } = limits;
  await store.transaction(async (tx) => {
    await tx.deleteFrom('sso_pending_logins').where('created_at_ms', '<=', now - ttlMs).execute();
    const mine = await tx
      .selectFrom('sso_pending_logins')
      .select(['state_digest', 'created_at_ms'])
      .where('client', '=', client)
      .orderBy('created_at_ms')
      .execute();
    const over = mine.length - perClient + 1;
    if (over > 0) {
      // The address's own oldest entries give way; never one a person may still be using.
      const victims = mine.slice(0, over);
      const youngest = Number(victims[victims.length - 1]?.created_at_ms);
      if (now - youngest < minAgeMs) throw refuse('from this address', youngest + minAgeMs - now);
      await tx.deleteFrom('sso_pending_logins').where('state_digest', 'in', victims.map((v) => v.state_digest)).execute();
    }
    const total = await tx
      .selectFrom('sso_pending_logins')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(total.n) >= global) {
      const top = await tx
        .selectFrom('sso_pending_logins')
        .select(['client', (eb) => eb.fn.countAll<number | string>().as('n')])
        .groupBy('client')
        .orderBy('n', 'desc')
        .limit(1)
        .executeTakeFirst();
      let q = tx.selectFrom('sso_pending_logins').select(['state_digest', 'created_at_ms']).where('created_at_ms', '<=', now - minAgeMs);
      if (top && Number(top.n) > 1) q = q.where('client', '=', top.client);
      let victim = await q.orderBy('created_at_ms').limit(1).executeTakeFirst();
      victim ??= await tx
        .selectFrom('sso_pending_logins')
        .select(['state_digest', 'created_at_ms'])
        .where('created_at_ms', '<=', now - minAgeMs)
        .orderBy('created_at_ms')
        .limit(1)
        .executeTakeFirst();
      if (!victim) throw refuse('on this server', minAgeMs);
      await tx.deleteFrom('sso_pending_logins').where('state_digest', '=', victim.state_digest).execute();
    }
    await tx
      .insertInto('sso_pending_logins')
      .values({
        state_digest: digest(state),
        client,
        issuer: p.issuer,
        redirect_uri: p.redirectUri,
        nonce: p.nonce,
        verifier: p.verifier,
        created_at_ms: now,
      })
      .execute();
  });
}

/** Consume a pending login by its state: undefined when unknown, expired, or already taken by another completion. */
export async function takePending(store: Store, state: string, ttlMs = PENDING_TTL_MS): Promise<PendingLogin | undefined> {
  const key = digest(state);
  const row = await store.transaction(async (tx) => {
    const found = await tx.selectFrom('sso_pending_logins').selectAll().where('state_digest', '=', key).executeTakeFirst();
    if (!found) return undefined;
    const del = await tx.deleteFrom('sso_pending_logins').where('state_digest', '=', key).executeTakeFirst();
    // Two completions racing on two replicas: only the one whose delete removed the row goes on.
    return Number(del.numDeletedRows) === 1 ? found : undefined;
  });
  if (!row || Number(row.created_at_ms) + ttlMs <= Date.now()) return undefined;
  return {
    nonce: row.nonce,
    verifier: row.verifier,
    redirectUri: row.redirect_uri,
    issuer: row.issuer,
    createdAtMs: Number(row.created_at_ms),
  };
}
