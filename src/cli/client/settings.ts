import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { CliError, CliUsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { parseDuration } from './duration.js';
import { parsePin } from './pins.js';
import type { SavedContext } from './context.js';

/** Spec "Client request timeout": 10s on the general client. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The shared client flags as typed on the command line (absent ones `undefined`). */
export type ClientFlags = {
  server?: string | undefined;
  tenant?: string | undefined;
  token?: string | undefined;
  tokenFile?: string | undefined;
  caCert?: string | undefined;
  pinSha256?: string[] | undefined;
  insecure?: boolean | undefined;
  allowCleartext?: boolean | undefined;
  timeout?: string | undefined;
};

/** Where a resolved value came from, for diagnostics and tests. */
export type ValueSource = 'flag' | 'env' | 'context' | 'default';

/** Everything the HTTP client needs, after flag > env > context precedence was applied. */
export type ClientSettings = {
  server: URL;
  tenant: string | undefined;
  token: string | undefined;
  /** Extra trusted root(s), PEM text. */
  caCertPem: string | undefined;
  /** Raw 32-byte SHA-256 digests of acceptable leaf SPKIs. */
  pins: Buffer[];
  insecure: boolean;
  allowCleartext: boolean;
  timeoutMs: number;
  sources: { server: ValueSource; tenant?: ValueSource; token?: ValueSource };
};

/**
 * Resolves the client settings, value by value: flag, then `SERVICE_*` env, then the saved context
 * (spec "Shared client flags" and Authentication item 9). Empty env values count as unset.
 */
export async function resolveClientSettings(
  flags: ClientFlags,
  env: Record<string, string | undefined>,
  context: SavedContext,
  stdin: Readable,
  defaultTimeoutMs: number = DEFAULT_TIMEOUT_MS,
): Promise<ClientSettings> {
  const fromEnv = (name: string): string | undefined => (env[name] ? env[name] : undefined);

  const server = pick(flags.server, fromEnv('SERVICE_SERVER_URL'), context.server);
  if (server === undefined) {
    throw new CliUsageError('no server: pass --server, set SERVICE_SERVER_URL, or save a context');
  }

  if (flags.token !== undefined && flags.tokenFile !== undefined) {
    throw new CliUsageError('--token and --token-file are mutually exclusive');
  }
  const tokenFlag = flags.tokenFile !== undefined ? await readTokenFile(flags.tokenFile, stdin) : flags.token;
  const token = pick(tokenFlag, fromEnv('SERVICE_TOKEN'), context.token);
  const tenant = pick(flags.tenant, fromEnv('SERVICE_TENANT'), context.tenant);

  const timeoutMs = flags.timeout === undefined ? defaultTimeoutMs : parseDuration(flags.timeout);
  if (timeoutMs === undefined) {
    throw new CliUsageError(`invalid --timeout "${flags.timeout}": use a duration such as 500ms, 10s, 2m or 1m30s`);
  }

  const pinTexts = flags.pinSha256 !== undefined && flags.pinSha256.length > 0 ? flags.pinSha256 : (context.pin_sha256 ?? []);
  const pins = pinTexts.map((text) => {
    const pin = parsePin(text);
    if (pin === undefined) {
      throw new CliUsageError(
        `invalid --pin-sha256 "${text}": expected the SHA-256 of the leaf SPKI as base64 (44 chars) or hex (64 digits)`,
      );
    }
    return pin;
  });

  const caCertPem = flags.caCert !== undefined ? await readPemFile(flags.caCert) : await contextPem(context.ca_cert);

  const sources: ClientSettings['sources'] = { server: server.source };
  if (token) sources.token = token.source;
  if (tenant) sources.tenant = tenant.source;
  return {
    server: parseServerUrl(server.value),
    tenant: tenant?.value,
    token: token?.value,
    caCertPem,
    pins,
    insecure: flags.insecure ?? false,
    allowCleartext: flags.allowCleartext ?? false,
    timeoutMs,
    sources,
  };
}

/** Parses `--server`; a bare `host:port` means https. Userinfo in the URL is refused (it would leak into logs). */
export function parseServerUrl(text: string): URL {
  const withScheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new CliUsageError(`invalid server URL "${text}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CliUsageError(`invalid server URL "${text}": only https:// and http:// are supported`);
  }
  if (url.username || url.password) {
    throw new CliUsageError('the server URL must not carry credentials; use --token or --token-file');
  }
  if (url.search || url.hash) throw new CliUsageError(`invalid server URL "${text}": no query or fragment allowed`);
  return url;
}

/**
 * True when `hostname` (as `URL.hostname` gives it) is the loopback interface: `localhost`,
 * 127.0.0.0/8 or ::1. Traffic to these never leaves the machine, so cleartext is acceptable there.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  // WHATWG URL serialises IPv4-mapped addresses in hex: [::ffff:127.0.0.1] becomes [::ffff:7f00:1].
  if (isIP(host) === 6) return host === '::1' || /^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(host);
  return false;
}

function pick(
  flag: string | undefined,
  env: string | undefined,
  context: string | undefined,
): { value: string; source: ValueSource } | undefined {
  if (flag !== undefined) return { value: flag, source: 'flag' };
  if (env !== undefined) return { value: env, source: 'env' };
  if (context !== undefined && context !== '') return { value: context, source: 'context' };
  return undefined;
}

async function readTokenFile(path: string, stdin: Readable): Promise<string> {
  let text: string;
  if (path === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    text = Buffer.concat(chunks).toString('utf8');
  } else {
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      throw new CliUsageError(`cannot read --token-file ${path}: ${(err as Error).message}`);
    }
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token)) {
    throw new CliUsageError(`--token-file ${path === '-' ? '(stdin)' : path} must hold exactly one token`);
  }
  return token;
}

async function readPemFile(path: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliUsageError(`cannot read --ca-cert ${path}: ${(err as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CliUsageError(`--ca-cert ${path} holds no PEM certificate`);
  return pem;
}

async function contextPem(value: string | undefined): Promise<string | undefined> {
  if (value === undefined || value === '') return undefined;
  if (value.includes('-----BEGIN CERTIFICATE-----')) return value;
  try {
    return await readFile(value, 'utf8');
  } catch (err) {
    throw new CliError(ExitCode.Err, 'bad_config', `cannot read ca_cert ${value} of the saved context: ${(err as Error).message}`);
  }
}
