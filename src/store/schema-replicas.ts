/**
 * Kysely table types of the state several `svc serve` replicas share on one database (migrations 27, 31 and 34;
 * docs/scale-out.md); merged into `Database` in schema.ts. Every table is global (no tenant).
 * On SQLite the tables exist (one schema for both backends) but a single process holds the file,
 * so the keyring, setup token and counters stay in the data directory and in memory there.
 */
import type { ColumnType } from 'kysely';

/** `audit_keyring`: the deployment's keyring (the public half of keyring.json: keys, seq ranges, rotation history), one row. */
export interface AuditKeyringTable {
  id: number;
  /** key_id of the one key replicas may sign with */
  active_key_id: string;
  /** JSON: {version: 1, active, keys: [{key_id, algorithm, public_key, created_at, retired_at?, ranges}]} */
  state: string;
  updated_at: string;
}

/** `setup_tokens`: the digest of the one pending setup token of the deployment, one row until setup completes. */
export interface SetupTokensTable {
  id: number;
  /** SHA-256 hex of the token */
  digest: string;
  /** which replica printed it (host, pid, data directory) */
  minted_by: string;
  minted_at: string;
}

/** `login_failures`: one row per failed login per lockout key (SHA-256 of `account:…` / `ip:…`), kept for the lockout window. */
export interface LoginFailuresTable {
  key: string;
  at_ms: ColumnType<number | string, number, number>;
}

/** `rate_limit_buckets` (migration 31): the deployment's token bucket per principal; replicas reserve tokens from it in chunks. */
export interface RateLimitBucketsTable {
  /** the principal (`Principal.actor`) */
  key: string;
  tokens: number;
  /** database clock (ms since epoch) when `tokens` was last refilled */
  at_ms: ColumnType<number | string, number, number>;
  /** tokens handed to the last reservation */
  granted: number;
}

/** `serve_replicas` (migration 31): one row per running replica, refreshed while it runs, deleted when it stops. */
export interface ServeReplicasTable {
  /** `<host>:<data dir>` */
  id: string;
  /** SHA-256 of the served certificate (colon-separated upper-case hex), null with --insecure */
  tls_fingerprint: string | null;
  started_at: string;
  seen_at_ms: ColumnType<number | string, number, number>;
}

/** `secrets_key_check` (migration 34): the deployment's secrets key, one row written at the first start (secrets/key-check.ts). */
export interface SecretsKeyCheckTable {
  id: number;
  /** the Sealer's key id (first 16 hex of SHA-256 of the key) */
  key_id: string;
  /** a fixed text sealed with that key: a replica that cannot open it holds another key */
  check_value: string;
  /** which replica recorded it (`<host>:<data dir>`) */
  recorded_by: string;
  recorded_at: string;
}

export interface ReplicaTables {
  audit_keyring: AuditKeyringTable;
  setup_tokens: SetupTokensTable;
  login_failures: LoginFailuresTable;
  rate_limit_buckets: RateLimitBucketsTable;
  serve_replicas: ServeReplicasTable;
  secrets_key_check: SecretsKeyCheckTable;
}

export const REPLICA_TENANT_TABLES = [] as const;
export const REPLICA_GLOBAL_TABLES = ['audit_keyring', 'setup_tokens', 'login_failures', 'rate_limit_buckets', 'serve_replicas',
  'secrets_key_check'] as const;

/** Privileges of the app role (postgres-roles.ts). The keyring row is written at first start and by rotation. */
export const REPLICA_APP_ROLE_GRANTS = {
  audit_keyring: ['select', 'insert', 'update'],
  setup_tokens: ['select', 'insert', 'update', 'delete'],
  login_failures: ['select', 'insert', 'delete'],
  rate_limit_buckets: ['select', 'insert', 'update', 'delete'],
  serve_replicas: ['select', 'insert', 'update', 'delete'],
  secrets_key_check: ['select', 'insert'],
} as const satisfies Record<keyof ReplicaTables, readonly ('select' | 'insert' | 'update' | 'delete')[]>;
