/**
 * `svc serve` configuration: flags > `SERVICE_*` environment > defaults, then the startup
 * refusals of the spec ("Secure defaults of serve", "Stated conditions"). Pure: no I/O, so every
 * rule is unit-tested without starting a server.
 */
import { parsePolicy } from '../events/egress/policy.js';
import { homedir } from 'node:os';
import { isIP } from 'node:net';
import path from 'node:path';
import type { StoreBackend } from '../store/store-types.js';
import { parseCryptoEngine, type CryptoEngineSetting } from '../ledger/ed25519-engine.js';
import { mergeRowsFromEnv } from '../modules/accessmap/recent-edges.js';
import { linkingIdsFromEnv } from '../modules/accessmap/linking-set.js';
import { nodeCacheFromEnv } from '../modules/accessmap/node-cache.js';
import { sqliteCacheMibFromEnv } from '../store/sqlite/sqlite-cache.js';
import { busConfigFromEnv, type BusConfig } from '../events/bus-config.js';
import { DEFAULT_BODY_TIMEOUT_MS } from '../http/engine.js';
import { tokenDefaultTtlFromEnv } from '../auth/token-ttl.js';

export interface ListenAddress {
  host: string;
  port: number;
  /** what the operator asked for: `tls`/`plaintext` when a scheme was given, else `default` */
  scheme: 'tls' | 'plaintext' | 'default';
}

export interface ServeConfig {
  listen: ListenAddress;
  grpcListen: ListenAddress;
  dataDir: string;
  tlsCert?: string;
  tlsKey?: string;
  /** PEM CA bundle: gRPC clients must present a certificate chaining to it (mutual TLS) */
  grpcClientCa?: string;
  insecure: boolean;
  seedDemo: boolean;
  store: StoreBackend;
  dsn?: string;
  logLevel: string;
  accessLog: boolean;
  /** default JSON body limit in bytes */
  bodyLimit: number;
  /** default handler deadline */
  requestTimeoutMs: number;
  /** lifetime of an API key issued without an expiry, ms (`SERVICE_TOKEN_DEFAULT_TTL`, auth/token-ttl.ts) */
  tokenDefaultTtlMs: number;
  /** longest silence while a request body arrives before 408 (`SERVICE_BODY_TIMEOUT_MS`) */
  bodyTimeoutMs: number;
  /** how long shutdown waits for in-flight requests */
  drainMs: number;
  /** Ed25519 engine setting (`SERVICE_CRYPTO_ENGINE`; ledger/ed25519-engine.ts reads the same variable) */
  cryptoEngine: CryptoEngineSetting;
  /**
   * rows the accessmap recent level collects before a merge (`SERVICE_ACCESSMAP_MERGE_ROWS`; modules/accessmap/recent-edges.ts reads the
   * same variable)
   */
  accessmapMergeRows: number;
  /**
   * linking resource ids SQLite path searches keep in memory, 0 = off (`SERVICE_ACCESSMAP_LINKING_IDS`; modules/accessmap/linking-set.ts
   * reads the same variable)
   */
  accessmapLinkingIds: number;
  /**
   * nodes SQLite ingest keeps resolved in memory, 0 = off (`SERVICE_ACCESSMAP_NODE_CACHE`; modules/accessmap/node-cache.ts reads the same
   * variable)
   */
  accessmapNodeCache: number;
  /** SQLite page cache in MiB (`SERVICE_SQLITE_CACHE_MIB`); undefined = the store's default (2048) */
  sqliteCacheMib?: number;
  /** the bus binding (`SERVICE_BUS`, `SERVICE_NATS_URL`) */
  bus: BusConfig;
  /** the flags as given, so `GET /v1/console/config/effective` can tell a flag from the environment */
  flags?: ServeFlags;
}

/** The raw flag values as clipanion hands them over (all optional). */
export interface ServeFlags {
  listen?: string;
  grpcListen?: string;
  dataDir?: string;
  tlsCert?: string;
  tlsKey?: string;
  grpcClientCa?: string;
  insecure?: boolean;
  seedDemo?: boolean;
  store?: string;
  dsn?: string;
  logLevel?: string;
}

/** A configuration the server refuses to start with; exit code 2 (Usage) with this message. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * `SERVICE_BODY_TIMEOUT_MS`: 1..9000. uWS closes a socket idle for 10 s or more without an
 * answer; a longer setting could never be reached, so it is refused rather than silently capped.
 */
function bodyTimeoutOf(raw: string | undefined): number {
  const v = parsePositiveInt(raw, 'SERVICE_BODY_TIMEOUT_MS') ?? DEFAULT_BODY_TIMEOUT_MS;
  if (v > 9000)
    throw new ConfigError(`SERVICE_BODY_TIMEOUT_MS must be at most 9000 (the HTTP engine closes a socket idle for 10 s), got ${v}`);
  return v;
}

export const DEFAULTS = {
  listen: '127.0.0.1:8443',
  grpcListen: '127.0.0.1:8444',
  bodyLimit: 1024 * 1024,
  requestTimeoutMs: 30_000,
  bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
  drainMs: 10_000,
} as const;

/** Default data directory: `$XDG_DATA_HOME/svc`, else `~/.local/share/svc`. */
export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : homedir();
  const base = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(home, '.local', 'share');
  return path.join(base, 'svc');
}

/** Resolve flags and environment into a checked configuration, or throw ConfigError. */
export function resolveServeConfig(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const pick = (flag: string | undefined, name: string): string | undefined => flag ?? nonEmpty(env[`SERVICE_${name}`]);
  const insecure = flags.insecure ?? parseBool(env.SERVICE_INSECURE, 'SERVICE_INSECURE') ?? false;
  const seedDemo = flags.seedDemo ?? parseBool(env.SERVICE_SEED_DEMO, 'SERVICE_SEED_DEMO') ?? false;
  refuseInsecureTls(env);
  // a bad SERVICE_EGRESS_ALLOW_PRIVATE entry refuses the start (the guard reads the same variable)
  checked(() => parsePolicy(env));
  const store = pick(flags.store, 'STORE') ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'postgres')
    throw new ConfigError(`--store must be "sqlite" or "postgres", got ${JSON.stringify(store)}`);
  const dsn = pick(flags.dsn, 'DSN');
  if (store === 'postgres' && !dsn)
    throw new ConfigError('--store postgres needs --dsn (or SERVICE_DSN), e.g. postgres://svc@127.0.0.1:5432/svc');
  if (store === 'sqlite' && dsn) throw new ConfigError('--dsn is only used with --store postgres');
  const tlsCert = pick(flags.tlsCert, 'TLS_CERT');
  const tlsKey = pick(flags.tlsKey, 'TLS_KEY');
  if (Boolean(tlsCert) !== Boolean(tlsKey)) throw new ConfigError('--tls-cert and --tls-key go together: give both or neither');
  const grpcClientCa = pick(flags.grpcClientCa, 'GRPC_CLIENT_CA');
  if (grpcClientCa && insecure) throw new ConfigError('contradictory flags: --grpc-client-ca (mutual TLS) with --insecure');
  const config: ServeConfig = {
    listen: parseListen(pick(flags.listen, 'LISTEN') ?? DEFAULTS.listen, '--listen', ['https', 'http']),
    grpcListen: parseListen(pick(flags.grpcListen, 'GRPC_LISTEN') ?? DEFAULTS.grpcListen, '--grpc-listen', ['grpcs', 'grpc']),
    dataDir: path.resolve(pick(flags.dataDir, 'DATA_DIR') ?? defaultDataDir(env)),
    tlsCert,
    tlsKey,
    grpcClientCa,
    insecure,
    seedDemo,
    store,
    dsn,
    logLevel: pick(flags.logLevel, 'LOG_LEVEL') ?? 'info',
    accessLog: parseBool(env.SERVICE_ACCESS_LOG, 'SERVICE_ACCESS_LOG') ?? true,
    bodyLimit: parsePositiveInt(env.SERVICE_BODY_LIMIT, 'SERVICE_BODY_LIMIT') ?? DEFAULTS.bodyLimit,
    requestTimeoutMs: parsePositiveInt(env.SERVICE_REQUEST_TIMEOUT_MS, 'SERVICE_REQUEST_TIMEOUT_MS') ?? DEFAULTS.requestTimeoutMs,
    bodyTimeoutMs: bodyTimeoutOf(env.SERVICE_BODY_TIMEOUT_MS),
    tokenDefaultTtlMs: checked(() => tokenDefaultTtlFromEnv(env)),
    drainMs: parsePositiveInt(env.SERVICE_DRAIN_MS, 'SERVICE_DRAIN_MS') ?? DEFAULTS.drainMs,
    cryptoEngine: cryptoEngineOf(env.SERVICE_CRYPTO_ENGINE),
    accessmapMergeRows: checked(() => mergeRowsFromEnv(env)),
    accessmapLinkingIds: checked(() => linkingIdsFromEnv(env)),
    accessmapNodeCache: checked(() => nodeCacheFromEnv(env)),
    sqliteCacheMib: checked(() => sqliteCacheMibFromEnv(env)),
    bus: checked(() => busConfigFromEnv(env)),
    flags,
  };
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(config.logLevel)) {
    throw new ConfigError(
      `--log-level must be one of fatal, error, warn, info, debug, trace, silent; got ${JSON.stringify(config.logLevel)}`,
    );
  }
  checkRefusals(config);
  return config;
}

function cryptoEngineOf(value: string | undefined): CryptoEngineSetting {
  return checked(() => parseCryptoEngine(value));
}

/**
 * `NODE_TLS_REJECT_UNAUTHORIZED=0` turns off certificate verification in every Node TLS client that
 * does not set it itself, including libraries svc does not control. Every client of svc sets it
 * explicitly, but the server refuses to start rather than run with verification off somewhere.
 */
export function refuseInsecureTls(env: NodeJS.ProcessEnv): void {
  const v = env['NODE_TLS_REJECT_UNAUTHORIZED'];
  if (v !== undefined && v !== '1')
    throw new ConfigError(
      `configuration refused: NODE_TLS_REJECT_UNAUTHORIZED=${JSON.stringify(v)} would turn off certificate verification ` +
        'of outgoing TLS; unset it (trust a private receiver with its ca_pem / tls.ca_file or a pin instead)',
    );
}

/** A setting parsed by its module's own parser; its error becomes a startup refusal. */
function checked<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** The spec's secure-default refusals; throws ConfigError naming the rule. */
export function checkRefusals(c: ServeConfig): void {
  const binds = [
    { flag: '--listen', addr: c.listen },
    { flag: '--grpc-listen', addr: c.grpcListen },
  ];
  if (c.seedDemo) {
    for (const { flag, addr } of binds) {
      if (!isLoopback(addr.host)) {
        throw new ConfigError(
          `refusing to start: --seed-demo provisions an administrator whose password is public, so it is only allowed on loopback ` +
            `binds, but ${flag} is ${hostPort(addr)}`,
        );
      }
    }
  }
  for (const { flag, addr } of binds) {
    if (c.insecure && !isLoopback(addr.host)) {
      throw new ConfigError(
        `refusing to start: --insecure serves plaintext and is only allowed on loopback binds, but ${flag} is ${hostPort(addr)}`,
      );
    }
    if (addr.scheme === 'plaintext' && !c.insecure) {
      const what = flag === '--grpc-listen' ? 'the gRPC server refuses to start in plaintext' : 'plain HTTP';
      throw new ConfigError(
        `refusing to start: ${flag} asks for plaintext (${hostPort(addr)}) but ${what} needs --insecure (loopback only)`,
      );
    }
    if (addr.scheme === 'tls' && c.insecure) {
      throw new ConfigError(`contradictory flags: ${flag} asks for TLS but --insecure turns TLS off`);
    }
  }
  if (c.insecure && (c.tlsCert || c.tlsKey)) throw new ConfigError('contradictory flags: --tls-cert/--tls-key with --insecure');
}

/** True for 127.0.0.0/8, ::1 and `localhost`. 0.0.0.0 and :: are wildcards, not loopback. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (h.startsWith('::ffff:')) return isLoopback(h.slice(7));
  return false;
}

/** Parse `host:port`, `[v6]:port` or `scheme://host:port`. */
export function parseListen(value: string, flag: string, schemes: [tls: string, plain: string]): ListenAddress {
  let rest = value.trim();
  let scheme: ListenAddress['scheme'] = 'default';
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(rest);
  if (m) {
    const s = (m[1] as string).toLowerCase();
    if (s === schemes[0]) scheme = 'tls';
    else if (s === schemes[1]) scheme = 'plaintext';
    else throw new ConfigError(`${flag}: unknown scheme "${s}://"; use ${schemes[0]}:// or ${schemes[1]}:// or plain host:port`);
    rest = rest.slice(m[0].length).replace(/\/$/, '');
  }
  let host: string;
  let portText: string;
  const v6 = /^\[([^\]]+)\]:(\d+)$/.exec(rest);
  if (v6) {
    host = v6[1] as string;
    portText = v6[2] as string;
  } else {
    const i = rest.lastIndexOf(':');
    if (i <= 0 || rest.indexOf(':') !== i)
      throw new ConfigError(`${flag}: expected host:port (IPv6 as [addr]:port), got ${JSON.stringify(value)}`);
    host = rest.slice(0, i);
    portText = rest.slice(i + 1);
  }
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new ConfigError(`${flag}: port must be 0..65535, got ${JSON.stringify(portText)}`);
  if (isIP(host) === 0 && !/^[A-Za-z0-9.-]+$/.test(host)) throw new ConfigError(`${flag}: invalid host ${JSON.stringify(host)}`);
  return { host, port, scheme };
}

function hostPort(a: ListenAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

function parseBool(v: string | undefined, name: string): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${name} must be true or false, got ${JSON.stringify(v)}`);
}

function parsePositiveInt(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new ConfigError(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return Number(v);
}
