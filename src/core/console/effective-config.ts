/**
 * `GET /v1/console/config/effective`: every setting with its value, where it came from (flag,
 * environment, default, stored) and whether it is redacted. Secrets are never shown: a setting
 * named like a secret, any URL's password and the stored SSO client secret (a reference, shown as
 * such) are redacted whatever their source. The same list goes into the support bundle.
 */
import type { ServeConfig, ServeFlags } from '../../serve/config.js';
import { defaultDataDir } from '../../serve/config.js';

export type SettingSource = 'flag' | 'env' | 'default' | 'stored';

export interface EffectiveSetting {
  name: string;
  /** the flag, if the setting has one */
  flag: string | null;
  /** the environment variable, if any */
  env: string | null;
  value: string | number | boolean | null;
  source: SettingSource;
  redacted: boolean;
}

const REDACTED = '[redacted]';
/** Variable names whose values are secrets (never *_FILE paths, which name where a secret lives). */
const SECRET_NAME = /(SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE|CREDENTIAL|APIKEY|API_KEY)(?!.*_FILE$)/i;

/** `scheme://user:password@host` → `scheme://user:[redacted]@host`; also `password=` in key/value DSNs. */
export function redactUrlPassword(value: string): { value: string; redacted: boolean } {
  let redacted = false;
  let out = value.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*):([^@/?#\s]*)@/gi, (_m, head: string) => {
    redacted = true;
    return `${head}:${REDACTED}@`;
  });
  out = out.replace(/(password|sslpassword)=([^&\s]*)/gi, (_m, k: string) => {
    redacted = true;
    return `${k}=${REDACTED}`;
  });
  return { value: out, redacted };
}

interface Known {
  name: string;
  flag?: keyof ServeFlags;
  flagName?: string;
  env: string;
  value: (c: ServeConfig) => string | number | boolean | null | undefined;
  /** the default shown when neither flag nor environment set it */
  defaultText?: string;
}

const listen = (a: ServeConfig['listen']): string => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

const KNOWN: Known[] = [
  { name: 'listen', flag: 'listen', flagName: '--listen', env: 'SERVICE_LISTEN', value: (c) => listen(c.listen) },
  { name: 'grpc_listen', flag: 'grpcListen', flagName: '--grpc-listen', env: 'SERVICE_GRPC_LISTEN', value: (c) => listen(c.grpcListen) },
  { name: 'data_dir', flag: 'dataDir', flagName: '--data-dir', env: 'SERVICE_DATA_DIR', value: (c) => c.dataDir },
  { name: 'tls_cert', flag: 'tlsCert', flagName: '--tls-cert', env: 'SERVICE_TLS_CERT', value: (c) => c.tlsCert ?? null },
  { name: 'tls_key', flag: 'tlsKey', flagName: '--tls-key', env: 'SERVICE_TLS_KEY', value: (c) => c.tlsKey ?? null },
  {
    name: 'grpc_client_ca',
    flag: 'grpcClientCa',
    flagName: '--grpc-client-ca',
    env: 'SERVICE_GRPC_CLIENT_CA',
    value: (c) => c.grpcClientCa ?? null,
  },
  { name: 'insecure', flag: 'insecure', flagName: '--insecure', env: 'SERVICE_INSECURE', value: (c) => c.insecure },
  { name: 'seed_demo', flag: 'seedDemo', flagName: '--seed-demo', env: 'SERVICE_SEED_DEMO', value: (c) => c.seedDemo },
  { name: 'store', flag: 'store', flagName: '--store', env: 'SERVICE_STORE', value: (c) => c.store },
  { name: 'dsn', flag: 'dsn', flagName: '--dsn', env: 'SERVICE_DSN', value: (c) => c.dsn ?? null },
  { name: 'log_level', flag: 'logLevel', flagName: '--log-level', env: 'SERVICE_LOG_LEVEL', value: (c) => c.logLevel },
  { name: 'access_log', env: 'SERVICE_ACCESS_LOG', value: (c) => c.accessLog },
  { name: 'body_limit', env: 'SERVICE_BODY_LIMIT', value: (c) => c.bodyLimit },
  { name: 'request_timeout_ms', env: 'SERVICE_REQUEST_TIMEOUT_MS', value: (c) => c.requestTimeoutMs },
  { name: 'drain_ms', env: 'SERVICE_DRAIN_MS', value: (c) => c.drainMs },
  { name: 'crypto_engine', env: 'SERVICE_CRYPTO_ENGINE', value: (c) => String(c.cryptoEngine) },
  { name: 'accessmap_merge_rows', env: 'SERVICE_ACCESSMAP_MERGE_ROWS', value: (c) => c.accessmapMergeRows },
  { name: 'accessmap_linking_ids', env: 'SERVICE_ACCESSMAP_LINKING_IDS', value: (c) => c.accessmapLinkingIds },
  { name: 'accessmap_node_cache', env: 'SERVICE_ACCESSMAP_NODE_CACHE', value: (c) => c.accessmapNodeCache },
  { name: 'sqlite_cache_mib', env: 'SERVICE_SQLITE_CACHE_MIB', value: (c) => c.sqliteCacheMib ?? 2048 },
  { name: 'pg_app_role', env: 'SERVICE_PG_APP_ROLE', value: () => undefined, defaultText: 'svc_app' },
  { name: 'audit_key_file', env: 'SERVICE_AUDIT_KEY_FILE', value: () => undefined, defaultText: 'minted in <data_dir>/audit-keys' },
  { name: 'audit_key_alg', env: 'SERVICE_AUDIT_KEY_ALG', value: () => undefined, defaultText: 'ed25519' },
  { name: 'audit_checkpoint_interval', env: 'SERVICE_AUDIT_CHECKPOINT_INTERVAL', value: () => undefined, defaultText: '60s' },
  { name: 'secrets_key_file', env: 'SERVICE_SECRETS_KEY_FILE', value: () => undefined, defaultText: '<data_dir>/secrets.key' },
  { name: 'rate_limit_rps', env: 'SERVICE_RATE_LIMIT_RPS', value: () => undefined, defaultText: '50' },
  { name: 'rate_limit_burst', env: 'SERVICE_RATE_LIMIT_BURST', value: () => undefined, defaultText: '200' },
  { name: 'pdp_engine', env: 'SERVICE_PDP_ENGINE', value: () => undefined, defaultText: 'none' },
  { name: 'webauthn_rp_id', env: 'SERVICE_WEBAUTHN_RP_ID', value: () => undefined, defaultText: 'localhost' },
  { name: 'webauthn_origins', env: 'SERVICE_WEBAUTHN_ORIGINS', value: () => undefined, defaultText: 'https://localhost' },
  { name: 'license_public_key', env: 'SERVICE_LICENSE_PUBLIC_KEY', value: () => undefined, defaultText: 'compiled in' },
  { name: 'update_manifest_url', env: 'SERVICE_UPDATE_MANIFEST_URL', value: () => undefined, defaultText: '' },
  { name: 'update_public_key', env: 'SERVICE_UPDATE_PUBLIC_KEY', value: () => undefined, defaultText: 'compiled in' },
];

/** Every setting of the running server; `stored` adds settings kept in the database (SSO, license). */
export function effectiveConfig(
  config: ServeConfig | undefined,
  env: NodeJS.ProcessEnv,
  stored: EffectiveSetting[] = [],
): EffectiveSetting[] {
  const out: EffectiveSetting[] = [];
  const seen = new Set<string>();
  for (const k of KNOWN) {
    seen.add(k.env);
    const fromFlag = k.flag !== undefined && config?.flags?.[k.flag] !== undefined;
    const envValue = env[k.env];
    const fromEnv = !fromFlag && envValue !== undefined && envValue !== '';
    const source: SettingSource = fromFlag ? 'flag' : fromEnv ? 'env' : 'default';
    let value: string | number | boolean | null | undefined = config ? k.value(config) : undefined;
    if (value === undefined) value = fromEnv ? (envValue as string) : source === 'default' ? (k.defaultText ?? null) : null;
    if (k.name === 'data_dir' && !config) value = defaultDataDir(env);
    out.push(redactSetting({ name: k.name, flag: k.flagName ?? null, env: k.env, value, source, redacted: false }));
  }
  // Variables this list does not know still show (their modules read them): named, sourced, redacted when secret-like.
  for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (!name.startsWith('SERVICE_') || seen.has(name) || value === undefined) continue;
    out.push(
      redactSetting({ name: name.slice('SERVICE_'.length).toLowerCase(), flag: null, env: name, value, source: 'env', redacted: false }),
    );
  }
  return [...out, ...stored.map(redactSetting)];
}

/** Redacts a secret-named setting whole, and any password inside a URL or DSN. */
export function redactSetting(s: EffectiveSetting): EffectiveSetting {
  if (typeof s.value !== 'string' || s.value === '') return s;
  if (SECRET_NAME.test(s.env ?? s.name) || SECRET_NAME.test(s.name)) return { ...s, value: REDACTED, redacted: true };
  const r = redactUrlPassword(s.value);
  return r.redacted ? { ...s, value: r.value, redacted: true } : s;
}
