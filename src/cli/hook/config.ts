/**
 * The hook's configuration: flags, then the `SERVICE_HOOK_*` variables (what `svc agent
 * managed-settings` writes into the settings' `env` block, so the rendered command line carries
 * no configuration that Claude Code would show the model), then the general `SERVICE_*`
 * variables, then the saved context (read only when its file exists: YAML is loaded on demand).
 * Every error message here is free of paths, URLs and pins, since the hook's reasons reach the model.
 */
import { access, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../client/duration.js';
import { parsePin } from '../client/pins.js';
import { HookFailure } from './failure.js';

/** What the transport needs, after precedence was applied and files were read. */
export type HookTarget = {
  server: URL;
  token: string | undefined;
  tenant: string | undefined;
  caCertPem: string | undefined;
  pins: Buffer[];
  insecure: boolean;
  allowCleartext: boolean;
};

export type HookConfig = { timeoutMs: number; agent: string | undefined; resolve: () => Promise<HookTarget> };

const VALUED = [
  '--server',
  '--tenant',
  '--token',
  '--token-file',
  '--ca-cert',
  '--pin-sha256',
  '--timeout',
  '--context',
  '--agent',
  '-o',
  '--output',
];
const BOOLEAN = ['--insecure', '--allow-cleartext'];

/** Parses the flags (the ones `svc claude-hook` always took) synchronously; files are read by `resolve`. */
export function readHookConfig(argv: string[], env: Record<string, string | undefined>): HookConfig {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (BOOLEAN.includes(name) && eq < 0) flags.set(name, ['true']);
    else if (VALUED.includes(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new HookFailure(`usage: ${name} needs a value`);
      flags.set(name, [...(flags.get(name) ?? []), value]);
    } else if (name === '--help' || name === '-h')
      throw new HookFailure('usage: svc claude-hook is run by the agent (see docs/governance.md)');
    else throw new HookFailure(`usage: unknown argument ${JSON.stringify(arg.slice(0, 40))}`);
  }
  const one = (name: string): string | undefined => flags.get(name)?.at(-1);
  const fromEnv = (name: string): string | undefined => (env[name] ? env[name] : undefined);
  const timeoutText = one('--timeout') ?? fromEnv('SERVICE_HOOK_TIMEOUT');
  const timeoutMs = timeoutText === undefined ? 5000 : parseDuration(timeoutText);
  if (timeoutMs === undefined || timeoutMs > 600_000) throw new HookFailure('usage: invalid --timeout');
  const agent = one('--agent') ?? fromEnv('SERVICE_HOOK_AGENT') ?? fromEnv('SERVICE_AGENT_ID');
  const resolve = async (): Promise<HookTarget> => {
    const token = one('--token');
    const tokenFile = one('--token-file') ?? fromEnv('SERVICE_HOOK_TOKEN_FILE');
    if (token !== undefined && one('--token-file') !== undefined) throw new HookFailure('usage: --token and --token-file are exclusive');
    const pinTexts = flags.get('--pin-sha256') ?? splitList(fromEnv('SERVICE_HOOK_PIN_SHA256'));
    const caFile = one('--ca-cert') ?? fromEnv('SERVICE_HOOK_CA_CERT');
    let server = one('--server') ?? fromEnv('SERVICE_HOOK_SERVER') ?? fromEnv('SERVICE_SERVER_URL');
    let bearer = token ?? (tokenFile !== undefined ? await readToken(tokenFile) : undefined) ?? fromEnv('SERVICE_TOKEN');
    let tenant = one('--tenant') ?? fromEnv('SERVICE_HOOK_TENANT') ?? fromEnv('SERVICE_TENANT');
    let pins = pinTexts;
    let caPem = caFile !== undefined ? await readPem(caFile) : undefined;
    const saved = await savedContext(env, one('--context') ?? fromEnv('SERVICE_CONTEXT'));
    if (saved) {
      server ??= saved.server || undefined;
      bearer ??= saved.token || undefined;
      tenant ??= saved.tenant || undefined;
      if (pins.length === 0) pins = saved.pin_sha256 ?? [];
      if (caPem === undefined && saved.ca_cert) caPem = saved.ca_cert.includes('-----BEGIN') ? saved.ca_cert : await readPem(saved.ca_cert);
    }
    if (server === undefined) throw new HookFailure('the hook is not configured: no server');
    return {
      server: parseServer(server),
      token: bearer,
      tenant,
      caCertPem: caPem,
      pins: pins.map((p) => parsePin(p) ?? failPin()),
      insecure: flags.has('--insecure'),
      allowCleartext: flags.has('--allow-cleartext'),
    };
  };
  return { timeoutMs, agent, resolve };
}

function splitList(text: string | undefined): string[] {
  return text === undefined ? [] : text.split(/[\s,]+/).filter((s) => s !== '');
}

function failPin(): never {
  throw new HookFailure('the hook is misconfigured: a pin is not a SHA-256 in base64 or hex');
}

function parseServer(text: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(text) ? text : `https://${text}`);
  } catch {
    throw new HookFailure('the hook is misconfigured: the server URL does not parse');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password || url.search || url.hash)
    throw new HookFailure('the hook is misconfigured: the server URL must be https://host[:port][/path]');
  return url;
}

async function readToken(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new HookFailure(`cannot read the token file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const token = text.trim();
  if (token === '' || /\s/.test(token)) throw new HookFailure('the token file must hold exactly one token');
  return token;
}

async function readPem(path: string): Promise<string> {
  let pem: string;
  try {
    pem = await readFile(path, 'utf8');
  } catch (err) {
    throw new HookFailure(`cannot read the CA certificate file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new HookFailure('the CA certificate file holds no PEM certificate');
  return pem;
}

/** The saved context, when its file exists; context.js (and YAML) are loaded only then. */
async function savedContext(env: Record<string, string | undefined>, name: string | undefined) {
  const path = env.SERVICE_CONFIG || join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'svc', 'config.yaml');
  try {
    await access(path);
  } catch {
    if (name !== undefined) throw new HookFailure('the hook is misconfigured: the named context does not exist');
    return undefined;
  }
  const context = await import('../client/context.js');
  try {
    return context.selectContext(await context.readConfig(path), name, path);
  } catch (err) {
    throw new HookFailure(`the saved context cannot be used (${(err as { code?: string }).code ?? 'error'})`);
  }
}
