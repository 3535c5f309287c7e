/**
 * The live replicas on one PostgreSQL database and the TLS certificate each serves
 * (docs/scale-out.md): replicas behind one load balancer must present one certificate, or clients
 * pinning it fail on whichever replica answers. Each replica records the SHA-256 fingerprint of its
 * certificate in `serve_replicas` (migration 31) and refreshes its row while it runs; a replica
 * whose certificate differs from a live replica's refuses to start, unless the operator set
 * SERVICE_TLS_ROLLING_CHANGE=1 for a certificate change made replica by replica.
 */
import { hostname } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Store } from '../store/store-types.js';
import { storeTimestamp } from '../store/timestamp.js';

/** A row not refreshed for this long is a replica that died (kill -9, host loss). */
export const REPLICA_STALE_MS = 15_000;
const HEARTBEAT_MS = 5_000;
const LOCK = 'svc.serve_replicas';
export const TLS_ROLLING_CHANGE_ENV = 'SERVICE_TLS_ROLLING_CHANGE';

/** The certificate differs from the live replicas': a configuration error (exit 2). */
export class TlsMismatchError extends Error {
  readonly code = 'tls_mismatch';
}

interface Log {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

export interface JoinOptions {
  dataDir: string;
  /** SHA-256 fingerprint of the served certificate; undefined with --insecure */
  fingerprint: string | undefined;
  /** SERVICE_TLS_ROLLING_CHANGE=1: start despite a different certificate (logged) */
  allowTlsChange: boolean;
  log: Log;
}

/** This replica's id: one data directory per replica per host. */
export function replicaId(dataDir: string): string {
  return `${hostname()}:${path.resolve(dataDir)}`;
}

/** Whether the rolling-change override is set; anything but 1/true/0/false/empty is refused. */
export function tlsRollingChangeFromEnv(env: NodeJS.ProcessEnv): boolean {
  const v = (env[TLS_ROLLING_CHANGE_ENV] ?? '').trim().toLowerCase();
  if (v === '' || v === '0' || v === 'false') return false;
  if (v === '1' || v === 'true') return true;
  throw new TlsMismatchError(`${TLS_ROLLING_CHANGE_ENV} must be 1 or 0, got ${JSON.stringify(env[TLS_ROLLING_CHANGE_ENV])}`);
}

const dbNowMs = sql<string>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * Check this replica's certificate against the live replicas' and register it, under one lock so
 * two replicas starting together see each other. Resolves to the function that deregisters it.
 * A store without concurrent writers (SQLite) has no other replica: nothing to do.
 */
export async function joinReplicas(store: Store, opts: JoinOptions): Promise<(() => Promise<void>) | undefined> {
  if (!store.capabilities.supportsAdvisoryLocks) return undefined;
  const id = replicaId(opts.dataDir);
  const fingerprint = opts.fingerprint ?? null;
  const upsert = sql`insert into serve_replicas (id, tls_fingerprint, started_at, seen_at_ms)
    values (${id}, ${fingerprint}, ${storeTimestamp()}, ${dbNowMs})
    on conflict (id) do update set tls_fingerprint = excluded.tls_fingerprint, seen_at_ms = excluded.seen_at_ms`;
  const others = await store.transaction(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${LOCK}))`.execute(tx);
    const live = await sql<{ id: string; tls_fingerprint: string | null }>`select id, tls_fingerprint from serve_replicas
      where id <> ${id} and seen_at_ms > ${dbNowMs} - ${REPLICA_STALE_MS}::bigint order by id`.execute(tx);
    const other = live.rows.filter((r) => fingerprint !== null && r.tls_fingerprint !== null && r.tls_fingerprint !== fingerprint);
    if (other.length > 0) {
      const them = other.map((r) => `${r.tls_fingerprint} (replica ${r.id})`).join(', ');
      if (!opts.allowTlsChange) {
        throw new TlsMismatchError(
          `this replica's TLS certificate (sha256 ${fingerprint}) differs from the certificate live replicas serve: ${them}; ` +
            `give every replica the same --tls-cert/--tls-key, ` +
            `or set ${TLS_ROLLING_CHANGE_ENV}=1 while changing the certificate replica by replica`,
        );
      }
      const msg = `${TLS_ROLLING_CHANGE_ENV}=1: starting with a TLS certificate other live replicas do not serve`;
      opts.log.warn({ fingerprint_sha256: fingerprint, others: other }, msg);
    }
    await upsert.execute(tx);
    return live.rows.length;
  });
  opts.log.info({ replica: id, fingerprint_sha256: fingerprint, other_live_replicas: others }, 'replica registered');
  const beat = setInterval(() => {
    store.transaction((tx) => upsert.execute(tx)).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  return async () => {
    clearInterval(beat);
    await store.transaction((tx) => sql`delete from serve_replicas where id = ${id}`.execute(tx)).catch(() => undefined);
  };
}
