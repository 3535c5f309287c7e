/**
 * Revocation seen by every replica at once (docs/scale-out.md): each replica keeps resolved
 * credentials for up to CREDENTIAL_CACHE_MS (runtime.ts); an identity change (revoke, logout,
 * disable, membership, tenant status…) empties the cache of the replica that made it, and, through
 * PostgreSQL `LISTEN/NOTIFY` on one channel, of every other replica on the database. The notice is
 * sent before the changing request answers (server.ts awaits it), so once a revocation has been
 * answered no replica serves the old credential from its cache. If the listening connection
 * drops, the replica empties its cache on reconnecting (it may have missed notices) and, until
 * then, the cache's 5 s lifetime bounds how stale it can be.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const INVALIDATION_CHANNEL = 'svc_identity_invalidate';

export interface InvalidationLink {
  /** tell the other replicas; resolves once PostgreSQL has taken the notice */
  publish(): Promise<void>;
  close(): Promise<void>;
}

interface Log {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/** Listen on the channel; `onRemote` runs for every other replica's notice (and after a reconnect). */
export async function startInvalidationLink(dsn: string, onRemote: () => void, log: Log): Promise<InvalidationLink> {
  const me = randomUUID();
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: dsn, connectionTimeoutMillis: 5000 });
    c.on('notification', (n) => {
      if (n.channel === INVALIDATION_CHANNEL && n.payload !== me) onRemote();
    });
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'credential invalidation listener lost its connection; reconnecting');
      if (client === c) client = undefined;
      void c.end().catch(() => undefined);
      schedule();
    });
    await c.connect();
    await c.query(`listen ${INVALIDATION_CHANNEL}`);
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
  log.info({ channel: INVALIDATION_CHANNEL }, 'credential invalidation shared with the other replicas (LISTEN/NOTIFY)');
  return {
    async publish() {
      const c = client;
      if (c === undefined) return;
      try {
        await c.query('select pg_notify($1, $2)', [INVALIDATION_CHANNEL, me]);
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'could not tell the other replicas of an identity change; their caches expire within 5 s');
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
export async function shareInvalidations(identity: { invalidateLocal(): void; publishInvalidation: (() => Promise<void>) | undefined }, store: { backend: string }, dsn: string | undefined, log: Log): Promise<(() => Promise<void>) | undefined> {
  if (store.backend !== 'postgres' || dsn === undefined) return undefined;
  const link = await startInvalidationLink(dsn, () => identity.invalidateLocal(), log);
  identity.publishInvalidation = () => link.publish();
  return () => link.close();
}

/** Wraps a mutation: it answers only once its invalidations (if any) reached the other replicas. */
export function publishedAround<C>(around: (ctx: C, handler: () => unknown) => unknown, identity: { invalidationsPublished(): Promise<void> }): (ctx: C, handler: () => unknown) => unknown {
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
