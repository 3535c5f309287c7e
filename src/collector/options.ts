/**
 * `svc collector` flags → checked options (spec "collector" flag table; Authentication item 7).
 * Secure by default: TLS always, unless `--insecure`; the bearer token never goes over plaintext
 * otherwise. Pure, so the refusals are testable without a process.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { PushTls } from './pusher.js';

export interface CollectorFlags {
  coreAddr?: string;
  ca?: string;
  clientCert?: string;
  clientKey?: string;
  serverName?: string;
  tokenFile?: string;
  insecure?: boolean;
  config?: string;
  spoolDir?: string;
}

export interface CollectorRunOptions {
  coreAddr: string;
  tls: PushTls | null;
  token: string;
  configFile: string;
  spoolDir: string;
}

/** A refused flag combination; exit 2 with the message. */
export class CollectorUsageError extends Error {
  override readonly name = 'CollectorUsageError';
}

function readPem(file: string, flag: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new CollectorUsageError(`cannot read ${flag} ${file}: ${(err as Error).message}`);
  }
}

/** Default spool: `$XDG_STATE_HOME/svc/collector-spool`, else `~/.local/state/svc/collector-spool`. */
export function defaultSpoolDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : homedir();
  const base = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(home, '.local', 'state');
  return path.join(base, 'svc', 'collector-spool');
}

/** Resolve and check the flags; reads the token and PEM files. */
export function resolveCollectorOptions(flags: CollectorFlags, env: NodeJS.ProcessEnv = process.env): CollectorRunOptions {
  if (!flags.coreAddr) throw new CollectorUsageError('--core-addr is required (host:port of the core gRPC listener)');
  const m = /^(?:(grpcs|https|grpc|http):\/\/)?([^/\s]+)$/.exec(flags.coreAddr);
  if (!m || !/:\d+$/.test(m[2] as string))
    throw new CollectorUsageError(`--core-addr must be host:port, got ${JSON.stringify(flags.coreAddr)}`);
  const scheme = m[1];
  const insecure = flags.insecure ?? false;
  if ((scheme === 'grpc' || scheme === 'http') && !insecure)
    throw new CollectorUsageError(
      `refusing to send the bearer token over plaintext (${flags.coreAddr}): use TLS, or --insecure for development`,
    );
  if ((scheme === 'grpcs' || scheme === 'https') && insecure)
    throw new CollectorUsageError('contradictory flags: --core-addr asks for TLS but --insecure turns it off');
  if (insecure && (flags.ca || flags.clientCert || flags.clientKey || flags.serverName))
    throw new CollectorUsageError('contradictory flags: --insecure (plaintext) with TLS flags');
  if (Boolean(flags.clientCert) !== Boolean(flags.clientKey)) throw new CollectorUsageError('--client-cert and --client-key go together');
  let token: string | undefined;
  if (flags.tokenFile) {
    try {
      token = readFileSync(flags.tokenFile, 'utf8').trim();
    } catch (err) {
      throw new CollectorUsageError(`cannot read --token-file ${flags.tokenFile}: ${(err as Error).message}`);
    }
  } else token = env['SERVICE_INGEST_TOKEN']?.trim();
  if (!token) throw new CollectorUsageError('a bearer token with ingest:write is required: --token-file or SERVICE_INGEST_TOKEN');
  if (/\s/.test(token)) throw new CollectorUsageError('the token must be a single line without spaces');
  if (!flags.config) throw new CollectorUsageError('--config is required (the sources file)');
  const tls: PushTls | null = insecure
    ? null
    : {
        ...(flags.ca ? { caPem: readPem(flags.ca, '--ca') } : {}),
        ...(flags.clientCert ? { certPem: readPem(flags.clientCert, '--client-cert') } : {}),
        ...(flags.clientKey ? { keyPem: readPem(flags.clientKey, '--client-key') } : {}),
        ...(flags.serverName ? { serverName: flags.serverName } : {}),
      };
  return {
    coreAddr: m[2] as string,
    tls,
    token,
    configFile: flags.config,
    spoolDir: path.resolve(flags.spoolDir ?? env['SERVICE_COLLECTOR_SPOOL_DIR'] ?? defaultSpoolDir(env)),
  };
}
