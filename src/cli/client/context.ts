import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/** One named saved context: where to connect and with which credential and trust anchors. */
export type SavedContext = {
  server?: string;
  tenant?: string;
  token?: string;
  /** Path of a PEM file, or the PEM text itself. */
  ca_cert?: string;
  pin_sha256?: string[];
};

/** The client configuration file: named contexts and the one in use. */
export type ClientConfig = {
  'current-context'?: string;
  contexts: Record<string, SavedContext>;
};

/**
 * Where the saved contexts live: `$SERVICE_CONFIG`, else `$XDG_CONFIG_HOME/svc/config.yaml`, else
 * `~/.config/svc/config.yaml` (DECISIONS.md "CLI"; XDG's default is that same directory).
 */
export function configPath(env: Record<string, string | undefined>): string {
  if (env.SERVICE_CONFIG) return env.SERVICE_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'svc', 'config.yaml');
}

/**
 * Reads the config file; a missing file is an empty config.
 *
 * The file holds bearer tokens, so one readable by group or others is refused outright (like
 * OpenSSH with a private key) rather than used: the mode is checked on the opened handle, so the
 * file that is checked is the file that is read.
 */
export async function readConfig(path: string): Promise<ClientConfig> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
    throw new CliError(ExitCode.Err, 'bad_config', `cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    const stat = await handle.stat();
    if ((stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      throw new CliError(
        ExitCode.Err,
        'insecure_config',
        `refusing to read ${path}: mode ${mode} lets group or others read saved credentials; fix with: chmod 600 ${path}`,
      );
    }
    return validateConfig(parse(await handle.readFile('utf8')) as unknown, path);
  } finally {
    await handle.close();
  }
}

/** Writes the config atomically (temp file in the same directory, fsync, rename) with mode 0600. */
export async function writeConfig(path: string, config: ClientConfig): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx' + 0600 at creation: the token never sits in a file with wider permissions, not even briefly.
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.chmod(0o600); // the umask may only narrow the mode; pin it exactly anyway
    await handle.writeFile(stringify(config), 'utf8');
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dir);
}

/** Adds or replaces one named context, optionally making it current, in the file at `path`. */
export async function saveContext(
  path: string,
  name: string,
  context: SavedContext,
  options: { makeCurrent?: boolean } = {},
): Promise<void> {
  const config = await readConfig(path);
  config.contexts[name] = context;
  if (options.makeCurrent || config['current-context'] === undefined) config['current-context'] = name;
  await writeConfig(path, config);
}

/**
 * Picks the context by name (`--context`, `SERVICE_CONTEXT`) or the current one. An explicitly
 * named context that does not exist is an error; no current context is simply an empty one.
 */
export function selectContext(config: ClientConfig, name: string | undefined, path: string): SavedContext {
  if (name !== undefined) {
    const found = config.contexts[name];
    if (found === undefined) {
      throw new CliError(ExitCode.Usage, 'usage', `no context named "${name}" in ${path}`);
    }
    return found;
  }
  const current = config['current-context'];
  return (current !== undefined ? config.contexts[current] : undefined) ?? {};
}

async function syncDirectory(dir: string): Promise<void> {
  // Makes the rename itself durable; some filesystems refuse fsync on a directory, which is fine.
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* best effort */
  }
}

function validateConfig(raw: unknown, path: string): ClientConfig {
  const bad = (why: string): CliError => new CliError(ExitCode.Err, 'bad_config', `invalid ${path}: ${why}`);
  if (raw === null || raw === undefined) return { contexts: {} };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a mapping at the top level');
  const top = raw as Record<string, unknown>;
  const current = top['current-context'];
  if (current !== undefined && typeof current !== 'string') throw bad('current-context must be a string');
  const contextsRaw = top.contexts ?? {};
  if (typeof contextsRaw !== 'object' || contextsRaw === null || Array.isArray(contextsRaw)) {
    throw bad('contexts must be a mapping of name to context');
  }
  const contexts: Record<string, SavedContext> = {};
  for (const [name, value] of Object.entries(contextsRaw as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(`context "${name}" must be a mapping`);
    const entry = value as Record<string, unknown>;
    const context: SavedContext = {};
    for (const key of ['server', 'tenant', 'token', 'ca_cert'] as const) {
      const field = entry[key];
      if (field === undefined || field === null) continue;
      if (typeof field !== 'string') throw bad(`context "${name}": ${key} must be a string`);
      context[key] = field;
    }
    const pins = entry.pin_sha256;
    if (pins !== undefined && pins !== null) {
      if (!Array.isArray(pins) || !pins.every((p) => typeof p === 'string')) {
        throw bad(`context "${name}": pin_sha256 must be a list of strings`);
      }
      context.pin_sha256 = pins as string[];
    }
    contexts[name] = context;
  }
  return current === undefined ? { contexts } : { 'current-context': current, contexts };
}
