/**
 * Revocation seen by every replica at once (docs/scale-out.md): each replica keeps resolved
 * credentials for up to CREDENTIAL_CACHE_MS (runtime.ts); an identity change (revoke, logout,
 * disable, membership, tenant status…) empties the cache of the replica that made it, and, through
 * PostgreSQL `LISTEN/NOTIFY`, of every other replica on the database. Each replica answers a notice
 * with an acknowledgement once its cache is empty, and the changing request answers only when every
 * replica listening at the time has acknowledged (server.ts awaits it), so once a revocation has been
 * answered no replica serves the old credential from its cache. A replica that does not acknowledge
 * within ACK_TIMEOUT_MS is logged and not waited for: its cache's 5 s lifetime bounds how stale it
 * can be. If the listening connection drops, the replica empties its cache on reconnecting (it may
 * have missed notices).
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const INVALIDATION_CHANNEL = 'svc_identity_invalidate';
export const ACK_CHANNEL = 'svc_identity_invalidate_ack';
/** The listening connections' `application_name`: how a replica counts who must acknowledge. */
const LISTENER_NAME = 'svc-credential-invalidation';
const ACK_TIMEOUT_MS = 2000;

export interface InvalidationLink {
  /** tell the other replicas; resolves once every listening replica emptied its cache (or ACK_TIMEOUT_MS passed) */
  publish(): Promise<void>;
  close(): Promise<void>;
}

interface Log {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

interface Waiter {
  expected: number;
  acked: Set<string>;
  done: () => void;
}

/** Listen on the channel; `onRemote` runs for every other replica's notice (and after a reconnect). */
export async function startInvalidationLink(dsn: string, onRemote: () => void, log: Log): Promise<InvalidationLink> {
  const me = randomUUID();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let sent = 0;
  const waiters = new Map<string, Waiter>();

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: dsn, connectionTimeoutMillis: 5000, application_name: LISTENER_NAME });
    c.on('notification', (n) => {
      const payload = n.payload ?? '';
      if (n.channel === INVALIDATION_CHANNEL) {
        const [from] = payload.split(' ');
        if (from === me) return;
        onRemote();
        // Acknowledge only after the cache is empty (onRemote is synchronous).
        c.query('select pg_notify($1, $2)', [ACK_CHANNEL, `${payload} ${me}`]).catch(() => undefined);
      } else if (n.channel === ACK_CHANNEL) {
        const [from, seq, by] = payload.split(' ');
        if (from !== me || by === undefined) return;
        const w = waiters.get(seq!);
        if (w === undefined) return;
        w.acked.add(by);
        if (w.acked.size >= w.expected) w.done();
      }
    });
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'credential invalidation listener lost its connection; reconnecting');
      if (client === c) client = undefined;
      void c.end().catch(() => undefined);
      schedule();
    });
    await c.connect();
    await c.query(`listen ${INVALIDATION_CHANNEL}`);
    await c.query(`listen ${ACK_CHANNEL}`);
    client = c;
  };
  const schedule = (): void => {
    if (closed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(
        // Notices sent while disconnected are lost: start from an empty cache.
        () => onRemote(),
        () => schedule(),
      );
    }, 1000);
    retry.unref();
  };

  await connect();
  log.info({ channel: INVALIDATION_CHANNEL }, 'credential invalidation shared with the other replicas (LISTEN/NOTIFY, acknowledged)');
  return {
    async publish() {
      const c = client;
      if (c === undefined) return;
      const seq = String(++sent);
      let timer: NodeJS.Timeout | undefined;
      const acked = new Promise<void>((resolve) => {
        waiters.set(seq, { expected: Number.POSITIVE_INFINITY, acked: new Set(), done: resolve });
        timer = setTimeout(resolve, ACK_TIMEOUT_MS);
      });
      try {
        // Who must acknowledge: every other replica's listening connection open now.
        const r = await c.query<{ n: string }>(
          'select count(*) as n from pg_stat_activity where application_name = $1 and datname = current_database() and pid <> ' +
            'pg_backend_pid()',
          [LISTENER_NAME],
        );
        const w = waiters.get(seq)!;
        w.expected = Number(r.rows[0]?.n ?? 0);
        if (w.expected === 0) w.done();
        await c.query('select pg_notify($1, $2)', [INVALIDATION_CHANNEL, `${me} ${seq}`]);
        if (w.acked.size >= w.expected) w.done();
        await acked;
        if (w.acked.size < w.expected) {
          log.warn(
            { expected: w.expected, acknowledged: w.acked.size },
            'not every replica acknowledged an identity change in time; their caches expire within 5 s',
          );
        }
      } catch (err) {
        log.warn(
          { err: (err as Error).message },
          'could not tell the other replicas of an identity change; their caches expire within 5 s',
        );
      } finally {
        clearTimeout(timer);
        waiters.delete(seq);
      }
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/** Wires `identity` to the other replicas on a Postgres store; returns the link's close (or nothing on SQLite). */
export async function shareInvalidations(
  identity: { invalidateLocal(): void; publishInvalidation: (() => Promise<void>) | undefined },
  store: { backend: string },
  dsn: string | undefined,
  log: Log,
): Promise<(() => Promise<void>) | undefined> {
  if (store.backend !== 'postgres' || dsn === undefined) return undefined;
  const link = await startInvalidationLink(dsn, () => identity.invalidateLocal(), log);
  identity.publishInvalidation = () => link.publish();
  return () => link.close();
}

/** Wraps a mutation: it answers only once its invalidations (if any) reached the other replicas. */
export function publishedAround<C>(
  around: (ctx: C, handler: () => unknown) => unknown,
  identity: { invalidationsPublished(): Promise<void> },
): (ctx: C, handler: () => unknown) => unknown {
  return (ctx, handler) =>
    around(ctx, () => {
      const r = handler();
      if (r === null || typeof r !== 'object' || typeof (r as { then?: unknown }).then !== 'function') return r;
      return (r as Promise<unknown>).then(async (v) => {
        await identity.invalidationsPublished();
        return v;
      });
    });
}
