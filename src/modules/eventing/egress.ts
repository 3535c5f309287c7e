/**
 * Egress control (docs/eventing.md "Egress control"): the mode (`compatibility` records what would
 * be blocked, `enforced` refuses), the allowlist of destination hosts, and the database fence.
 * Mode, allowlist and fence live in global tables the app only reads (migration 30); the operator
 * commands `svc eventing egress actuate` and `svc eventing fence …` change them.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Store } from '../../store/store-types.js';

export type EgressMode = 'compatibility' | 'enforced';

export interface EgressPolicy {
  mode: EgressMode;
  fence_armed: boolean;
  allow: string[];
}

export interface EgressVerdict {
  allowed: boolean;
  reason: string;
}

/** The policy as stored (defaults when migration 30's row is missing: compatibility, disarmed). */
export async function readEgressPolicy(store: Store): Promise<EgressPolicy> {
  return store.transaction(async (tx) => {
    const row = await tx.selectFrom('egress_settings').select(['mode', 'fence_armed']).where('id', '=', 1).executeTakeFirst();
    const allow = await tx.selectFrom('egress_allowlist').select('host').orderBy('host').execute();
    return { mode: row?.mode ?? 'compatibility', fence_armed: row?.fence_armed === 1, allow: allow.map((a) => a.host) };
  });
}

/** `host` or `host:port`, lower case; throws on anything else. */
export function normalizeAllowEntry(entry: string): string {
  const e = entry.trim().toLowerCase();
  let url: URL;
  try {
    url = new URL(`https://${e}/`);
  } catch {
    throw new Error(`not a host or host:port: ${JSON.stringify(entry)}`);
  }
  if (url.host !== e && url.hostname !== e) throw new Error(`not a host or host:port: ${JSON.stringify(entry)}`);
  return e;
}

/** Whether `endpoint` may be delivered to under `allow` (the same match the fence trigger makes). */
export function checkEgress(endpoint: string, allow: readonly string[]): EgressVerdict {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { allowed: false, reason: 'endpoint is not an absolute URL' };
  }
  const authority = url.host.toLowerCase();
  const hit = allow.find((a) => a === authority || authority.startsWith(`${a}:`));
  if (hit !== undefined) return { allowed: true, reason: `host ${authority} matches allowlist entry ${hit}` };
  return { allowed: false, reason: `host ${authority} is not in the egress allowlist` };
}

/** The policy, read at most once a second per store (operators change it out of process). */
const cache = new WeakMap<Store, { at: number; policy: Promise<EgressPolicy> }>();
export function cachedEgressPolicy(store: Store, now = Date.now()): Promise<EgressPolicy> {
  const hit = cache.get(store);
  if (hit && now - hit.at < 1000) return hit.policy;
  const policy = readEgressPolicy(store);
  cache.set(store, { at: now, policy });
  policy.catch(() => cache.delete(store));
  return policy;
}

/** In enforced mode, the refusal message for `endpoint` when it is not allowed; else null. */
export async function egressRefusal(store: Store, endpoint: string): Promise<string | null> {
  const policy = await cachedEgressPolicy(store);
  if (policy.mode !== 'enforced') return null;
  const v = checkEgress(endpoint, policy.allow);
  return v.allowed ? null : `egress policy enforced: ${v.reason} (svc eventing egress actuate --allow)`;
}

/** What enforcing would block now: the enabled subscriptions of `tenant` whose endpoint is not allowed. */
export async function wouldBlock(
  store: Store,
  tenant: string,
  allow: readonly string[],
): Promise<{ id: string; name: string; endpoint: string; reason: string }[]> {
  const rows = await store.withTenant(tenant, (tx) =>
    tx
      .selectFrom('event_subscriptions')
      .select(['id', 'name', 'endpoint'])
      .where('tenant_id', '=', tenant)
      .where('enabled', '=', 1)
      .orderBy('name')
      .execute(),
  );
  return rows.flatMap((r) => {
    const v = checkEgress(r.endpoint, allow);
    return v.allowed ? [] : [{ id: r.id, name: r.name, endpoint: r.endpoint, reason: v.reason }];
  });
}

export interface FenceVerifyResult {
  refused: boolean;
  detail: string;
}

class Rollback extends Error {}

/**
 * Attempts the write the fence forbids (an enabled subscription to a host never allowlisted),
 * through the app's own path (on Postgres the app role, under RLS), inside a transaction that is
 * always rolled back. `refused` only when the database itself refused it with the fence's error.
 */
export async function verifyFence(store: Store): Promise<FenceVerifyResult> {
  const tenant = randomUUID();
  const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000000Z');
  try {
    await store.withTenant(tenant, async (tx) => {
      await sql`insert into event_subscriptions (id, tenant_id, name, enabled, event_types, endpoint, sink_format, secret_sealed,
        max_attempts, initial_interval_s, timeout_ms, role, created_by, cursor_seq, version, created_at, updated_at)
        values (${randomUUID()}, ${tenant}, 'egress-fence-verify', 1, '[]', 'https://egress-fence-verify.invalid/', 'json', 'x', 1, 1,
          1000, 'viewer', 'svc eventing fence verify', 0, 1, ${now}, ${now})`.execute(
        tx,
      );
      throw new Rollback('the database accepted the forbidden write (rolled back)');
    });
  } catch (err) {
    const message = (err as Error).message;
    if (err instanceof Rollback) return { refused: false, detail: message };
    if (message.includes('egress fence')) return { refused: true, detail: `the database refused the forbidden write: ${message}` };
    return { refused: false, detail: `the write failed, but not by the fence: ${message}` };
  }
  return { refused: false, detail: 'unreachable' };
}
