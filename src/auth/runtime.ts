/**
 * The identity area's process state, built once by the composition root and reached through
 * `ctx.services.identity`: setup state, the credential cache, login lockout, the rate limiter,
 * the policy decision point and the permission catalog.
 */
import { tokenDefaultTtlFromEnv } from './token-ttl.js';
import { ApiError } from '../contract/errors.js';
import type { Store } from '../store/store-types.js';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import { LoginLockout, type LockoutOptions } from './lockout.js';
import { SharedLoginLockout, type Lockout } from './lockout-shared.js';
import { RateLimiter, RATE_LIMIT_DEFAULTS, type RateLimitOptions } from './rate-limit.js';
import { SharedRateLimiter, type Limiter } from './rate-limit-shared.js';
import { nonePdp, type PolicyDecisionPoint } from './pdp.js';
import { permissionCatalog, type PermissionRule } from './roles.js';
import type { Principal } from './principal.js';
import { countUsers, findLiveTenant } from './identity-store.js';
import { PASSWORD_PARAMS, type ScryptParams } from './passwords.js';

/** What the authorizer needs to know of a tenant. */
export interface TenantInfo {
  id: string;
  name: string;
  region: string;
  status: 'active' | 'suspended';
}

/** Sessions last 12 h (DECISIONS.md). */
export const SESSION_TTL_MS = 12 * 3600_000;
/** AAL3 lasts 15 minutes after a step-up (DECISIONS.md). */
export const AAL3_TTL_MS = 15 * 60_000;
/** How long a resolved credential is trusted without a database read (revocation in-process is immediate). */
export const CREDENTIAL_CACHE_MS = 5_000;

/**
 * Called inside the transaction that creates a tenant. The seam for the default workspace of
 * issue 3 item 5: the workspaces area registers a hook here once its table exists.
 */
export type OrgCreatedHook = (tx: Transaction<Database>, tenant: { id: string; name: string }) => Promise<void>;

export interface IdentityOptions {
  store: Store;
  dataDir: string;
  routes: readonly { permission: string; privileged?: boolean }[];
  pdp?: PolicyDecisionPoint;
  lockout?: Partial<LockoutOptions>;
  rateLimit?: Partial<RateLimitOptions>;
  /** lifetime of an API key issued without `expires_at` or `ttl`, in ms (`SERVICE_TOKEN_DEFAULT_TTL`; default 90 days) */
  tokenDefaultTtlMs?: number;
  /** scrypt cost of new hashes; `svc serve` always uses PASSWORD_PARAMS (tests may lower it for speed) */
  passwordParams?: ScryptParams;
  now?: () => number;
  /**
   * count failed logins in the store, for every replica on it (Postgres; docs/scale-out.md); default: when the store has concurrent writers
   */
  sharedLockout?: boolean;
  /** one token bucket per principal for every replica on the store (Postgres; docs/scale-out.md); default: as sharedLockout */
  sharedRateLimit?: boolean;
  /** a shared rate-limit reservation failed; the replica's own bucket answers meanwhile */
  onRateLimitError?: (err: unknown) => void;
}

interface CachedCredential {
  secretHash: string;
  principal: Principal;
  generation: number;
  loadedAt: number;
}

/** Identity process state; one per server. */
export class IdentityRuntime {
  readonly store: Store;
  readonly dataDir: string;
  readonly lockout: Lockout;
  readonly limiter: Limiter;
  readonly pdp: PolicyDecisionPoint;
  readonly catalog: PermissionRule[];
  readonly orgCreatedHooks: OrgCreatedHook[] = [];
  readonly now: () => number;
  readonly passwordParams: ScryptParams;
  readonly tokenDefaultTtlMs: number;
  private setupPending = true;
  private lastSetupCheck = 0;
  private generation = 0;
  private readonly credentials = new Map<string, CachedCredential>();
  private readonly tenants = new Map<string, { info: TenantInfo | undefined; generation: number; loadedAt: number }>();

  constructor(opts: IdentityOptions) {
    this.store = opts.store;
    this.dataDir = opts.dataDir;
    this.now = opts.now ?? Date.now;
    const shared = opts.sharedLockout ?? opts.store.capabilities.supportsConcurrentWriters;
    this.lockout = shared
      ? new SharedLoginLockout(opts.store, { now: this.now, ...opts.lockout })
      : new LoginLockout({ now: this.now, ...opts.lockout });
    this.limiter = (opts.sharedRateLimit ?? shared)
      ? new SharedRateLimiter(opts.store, {
          now: this.now,
          ...opts.rateLimit,
          ...(opts.onRateLimitError ? { onError: opts.onRateLimitError } : {}),
        })
      : new RateLimiter({ now: this.now, ...opts.rateLimit });
    this.pdp = opts.pdp ?? nonePdp;
    this.catalog = permissionCatalog(opts.routes);
    this.passwordParams = opts.passwordParams ?? PASSWORD_PARAMS;
    this.tokenDefaultTtlMs = opts.tokenDefaultTtlMs ?? tokenDefaultTtlFromEnv({});
  }

  /** Read from the store whether a user exists; call once at startup (then the flag is cached). */
  async loadSetupState(): Promise<boolean> {
    const users = await this.store.transaction((tx) => countUsers(tx));
    this.setupPending = users === 0;
    this.lastSetupCheck = this.now();
    return this.setupPending;
  }

  /**
   * True until the first user exists (the setup gate); a cached flag, no I/O per request. While
   * it is still true the store is re-read in the background at most once a second, so a replica
   * sees a setup completed on another replica without a restart.
   */
  setupRequired(): boolean {
    if (this.setupPending && this.now() - this.lastSetupCheck > 1000) {
      this.lastSetupCheck = this.now();
      this.store
        .transaction((tx) => countUsers(tx))
        .then((n) => {
          if (n > 0) this.setupPending = false;
        })
        .catch(() => undefined);
    }
    return this.setupPending;
  }

  /** Flip the gate once setup has committed (or a demo seed created the first user). */
  markSetupComplete(): void {
    this.setupPending = false;
  }

  /** A cached credential still valid for this generation, or undefined. */
  cached(selector: string): CachedCredential | undefined {
    const hit = this.credentials.get(selector);
    if (!hit) return undefined;
    if (hit.generation !== this.generation || this.now() - hit.loadedAt > CREDENTIAL_CACHE_MS) {
      this.credentials.delete(selector);
      return undefined;
    }
    return hit;
  }

  /** The cache generation; read it before a store lookup and hand it to `remember`. */
  get cacheGeneration(): number {
    return this.generation;
  }

  /** Remember a resolved credential, unless an invalidation happened while it was being read. */
  remember(selector: string, secretHash: string, principal: Principal, generation: number): void {
    if (generation !== this.generation) return;
    if (this.credentials.size > 50_000) this.credentials.clear();
    this.credentials.set(selector, { secretHash, principal, generation, loadedAt: this.now() });
  }

  /** A live tenant (cached like credentials), or undefined when it does not exist or was deleted. */
  async tenant(id: string): Promise<TenantInfo | undefined> {
    const hit = this.tenants.get(id);
    if (hit && hit.generation === this.generation && this.now() - hit.loadedAt <= CREDENTIAL_CACHE_MS) return hit.info;
    const generation = this.generation;
    const row = await this.store.transaction((tx) => findLiveTenant(tx, id));
    const info = row ? { id: row.id, name: row.name, region: row.region, status: row.status } : undefined;
    if (this.tenants.size > 10_000) this.tenants.clear();
    this.tenants.set(id, { info, generation, loadedAt: this.now() });
    return info;
  }

  /**
   * Drop every cached credential. Called after any identity change (revoke, rotate, logout,
   * refresh, disable, membership, tenant status) once it has committed, so the next request of
   * this process reads the store again: correctness first, the cache only saves unchanged reads.
   */
  invalidate(): void {
    this.invalidateLocal();
    const sent = this.publishInvalidation?.();
    if (sent !== undefined) this.#published = Promise.all([this.#published, sent]).then(() => undefined);
  }

  /** Drop this process's cached credentials only (another replica's notice: replica-invalidation.ts). */
  invalidateLocal(): void {
    this.generation++;
    this.credentials.clear();
    this.tenants.clear();
  }

  /** Set by the composition root on a store shared by replicas: tells the others of an invalidation. */
  publishInvalidation: (() => Promise<void>) | undefined;
  #published: Promise<void> = Promise.resolve();

  /** Resolves once every invalidation so far has reached the other replicas (awaited before a mutation answers). */
  invalidationsPublished(): Promise<void> {
    return this.#published;
  }
}

/** Rate-limit options from `SERVICE_RATE_LIMIT_RPS` / `SERVICE_RATE_LIMIT_BURST` (0 RPS turns it off). */
export function rateLimitFromEnv(env: NodeJS.ProcessEnv): Partial<RateLimitOptions> {
  const num = (name: string, fallback: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  return {
    ratePerSecond: num('SERVICE_RATE_LIMIT_RPS', RATE_LIMIT_DEFAULTS.ratePerSecond),
    burst: Math.max(1, num('SERVICE_RATE_LIMIT_BURST', RATE_LIMIT_DEFAULTS.burst)),
  };
}

/** The identity runtime of a request, or a 500 when the server was built without one. */
export function identityOf(services: { identity?: IdentityRuntime }): IdentityRuntime {
  if (!services.identity) throw new ApiError('internal', 'identity runtime not configured');
  return services.identity;
}
