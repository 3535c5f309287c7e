/** Shared pieces of `svc capabilities configs …`: names where ids are, the body from a file and flags, renderings. */
import { Option } from 'clipanion';
import { CliError, CliUsageError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';
import type { HttpClient } from '../../client/http-client.js';
import { isUuid } from '../../client/resolve.js';
import { ClientCommand } from '../../client/base-command.js';
import { readText } from '../hookpep/support.js';
import { fields, table } from '../auth/support.js';

export const CONFIGS = '/v1/m/capabilities/configs';

export type ConfigView = {
  id: string;
  name: string;
  kind: string;
  description: string;
  enabled: boolean;
  transport: string | null;
  command: string | null;
  args: string[];
  url: string | null;
  env: Record<string, string>;
  headers: Record<string, string>;
  server: string | null;
  tool: string | null;
  allowed_tools: string[];
  denied_tools: string[];
  requires_approval: boolean;
  timeout_ms: number;
  secret_refs: string[];
  revision: number;
  created_at: string;
  updated_at: string;
};

/** A configuration's id from its id or name (exit 4 when there is none). */
export async function configId(client: HttpClient, ref: string): Promise<string> {
  if (isUuid(ref)) return ref.toLowerCase();
  if (!/^[a-z0-9][a-z0-9._-]{0,99}$/.test(ref))
    throw new CliUsageError(`invalid configuration ${JSON.stringify(ref)}: give its id (a UUID) or name`);
  const page = (await client.get(CONFIGS, { query: { name: ref } })).body as { items: ConfigView[] };
  const [only] = page.items;
  if (!only) throw new CliError(ExitCode.NotFound, 'not_found', `no capability configuration named ${JSON.stringify(ref)}`);
  return only.id;
}

export function configTable(items: ConfigView[]): string {
  return table(items, [
    ['id', (c) => c.id],
    ['name', (c) => c.name],
    ['kind', (c) => c.kind],
    ['enabled', (c) => c.enabled],
    ['transport', (c) => c.transport ?? (c.server ? `via ${c.server}` : '-')],
    ['secrets', (c) => c.secret_refs.join(',') || '-'],
    ['rev', (c) => c.revision],
  ]);
}

export function configFields(c: ConfigView): string {
  const kv = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k}=${v}`);
  return fields({
    ...c,
    env: kv(c.env),
    headers: kv(c.headers),
    command: c.command ?? '-',
    url: c.url ?? '-',
    transport: c.transport ?? '-',
    server: c.server ?? '-',
    tool: c.tool ?? '-',
  });
}

const pairs = (list: string[] | undefined, flag: string): Record<string, string> | undefined => {
  if (!list) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    const i = item.indexOf('=');
    if (i <= 0) throw new CliUsageError(`${flag} takes KEY=VALUE (a credential as KEY=secret:<name>), got ${JSON.stringify(item)}`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
};

/** The flags of create and replace: a JSON file (`--file`) and/or one flag per field; flags win. */
export abstract class ConfigBodyCommand extends ClientCommand {
  file = Option.String('--file', { description: 'The whole configuration as JSON (file or - for stdin); flags override its fields' });
  name = Option.String('--name', { description: 'Unique name (lowercase letters, digits, . _ -)' });
  kind = Option.String('--kind', { description: 'mcp_server or tool' });
  description = Option.String('--description', { description: 'What it is for' });
  disabled = Option.Boolean('--disabled', { description: 'Store it disabled (default enabled)' });
  transport = Option.String('--transport', { description: 'stdio (default), http or sse (mcp_server)' });
  command = Option.String('--command', { description: 'The command of a stdio server' });
  arg = Option.Array('--arg', { description: 'An argument of the command (repeatable)' });
  url = Option.String('--url', { description: 'The URL of an http/sse server (https, or http on loopback)' });
  env = Option.Array('--env', { description: 'KEY=VALUE, credentials as KEY=secret:<name> (repeatable)' });
  header = Option.Array('--header', { description: 'Name=VALUE, credentials as Name=secret:<name> (repeatable)' });
  mcpServer = Option.String('--mcp-server', { description: 'The mcp_server configuration (name) a tool belongs to (tool)' });
  tool = Option.String('--tool', { description: 'The tool name (tool)' });
  allowedTool = Option.Array('--allowed-tool', { description: 'Allow only these tools (mcp_server; repeatable)' });
  deniedTool = Option.Array('--denied-tool', { description: 'Deny these tools (mcp_server; repeatable)' });
  requiresApproval = Option.Boolean('--requires-approval', { description: 'Calls need approval' });
  timeoutMs = Option.String('--timeout-ms', { description: 'Call timeout in ms (default 30000)' });

  protected async body(): Promise<Record<string, unknown>> {
    let base: Record<string, unknown> = {};
    if (this.file) {
      try {
        base = JSON.parse(await readText(this.file, this.context.stdin)) as Record<string, unknown>;
      } catch (err) {
        throw new CliUsageError(`--file is not JSON: ${(err as Error).message}`);
      }
    }
    const set: Record<string, unknown> = {
      name: this.name,
      kind: this.kind,
      description: this.description,
      enabled: this.disabled === undefined ? undefined : !this.disabled,
      transport: this.transport,
      command: this.command,
      args: this.arg,
      url: this.url,
      env: pairs(this.env, '--env'),
      headers: pairs(this.header, '--header'),
      server: this.mcpServer,
      tool: this.tool,
      allowed_tools: this.allowedTool,
      denied_tools: this.deniedTool,
      requires_approval: this.requiresApproval,
      timeout_ms: this.timeoutMs === undefined ? undefined : Number(this.timeoutMs),
    };
    for (const [k, v] of Object.entries(set)) if (v !== undefined) base[k] = v;
    return base;
  }
}
