import { Command, Option } from 'clipanion';
import type { BaseContext } from 'clipanion';
import * as t from 'typanion';
import { confirmDestructive } from './confirm.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { HttpClient } from './http-client.js';
import { buildInfo } from '../../build-info.js';
import { DEFAULT_TIMEOUT_MS, resolveClientSettings } from './settings.js';
import type { ClientSettings } from './settings.js';

/** Output formats of `-o, --output`. */
export type OutputFormat = 'text' | 'json';

/**
 * Base of every `svc` command: the global `-o, --output text|json` flag and one error policy.
 *
 * Error policy (the same for every command): a failure is reported as ONE line on stderr,
 * `svc: <code>: <message>`, and the process exits with the mapped code. With `-o json` the
 * failure is ALSO written to stdout as one JSON line in the error-envelope shape,
 * `{"error":{"code","message","exit_code"[,"http_status"]}}`, so a script that parses stdout
 * always gets exactly one JSON document, result or error.
 */
export abstract class BaseCommand extends Command<BaseContext> {
  output = Option.String('-o,--output', 'text', {
    description: 'Output format: text (default, for people) or json (one stable JSON document per line)',
    validator: t.isEnum(['text', 'json'] as const),
  });

  /** True when `-o json` was given. */
  protected get json(): boolean {
    return this.output === 'json';
  }

  /** Runs the command and turns any thrown error into the reported line and its exit code. */
  override async validateAndExecute(): Promise<number> {
    try {
      return await super.validateAndExecute();
    } catch (err) {
      return this.report(err);
    }
  }

  /** Prints a result: compact JSON on one line with `-o json`, `text(value)` otherwise. */
  protected emit<T>(value: T, text: (value: T) => string): void {
    const rendered = this.json ? `${JSON.stringify(value)}\n` : text(value);
    this.context.stdout.write(rendered.endsWith('\n') || rendered === '' ? rendered : `${rendered}\n`);
  }

  /** Asks for confirmation of a destructive action (see {@link confirmDestructive}); pair with {@link yesOption}. */
  protected async requireYes(yes: boolean, action: string): Promise<void> {
    await confirmDestructive({ yes, action, stdin: this.context.stdin, stderr: this.context.stderr });
  }

  /** Writes the error line (and the JSON envelope with `-o json`) and returns the exit code. */
  protected report(err: unknown): number {
    const failure = toCliError(err);
    this.context.stderr.write(`svc: ${failure.code}: ${failure.message}\n`);
    if (this.context.env.SERVICE_DEBUG && err instanceof Error && !(err instanceof CliError)) {
      this.context.stderr.write(`${err.stack ?? ''}\n`);
    }
    if (this.json) this.context.stdout.write(`${JSON.stringify(errorDocument(failure))}\n`);
    return failure.exitCode;
  }
}

/** The `-y, --yes` option destructive commands declare (`yes = yesOption()`). */
export function yesOption(): boolean {
  return Option.Boolean('-y,--yes', false, { description: 'Do not ask for confirmation (required when stdin is not a terminal)' });
}

/**
 * Base of commands that talk to a server: the shared client flags of the spec ("Shared client
 * flags") plus `--context`. Each value resolves flag > `SERVICE_*` env > saved context.
 */
export abstract class ClientCommand extends BaseCommand {
  server = Option.String('--server', {
    description: 'Server URL (default: $SERVICE_SERVER_URL, then the saved context); https:// is assumed',
  });
  tenant = Option.String('--tenant', {
    description: 'Tenant id sent as X-Service-Tenant (default: $SERVICE_TENANT, then the saved context)',
  });
  token = Option.String('--token', { description: 'Bearer token (default: $SERVICE_TOKEN, then the saved context); prefer --token-file' });
  tokenFile = Option.String('--token-file', { description: 'Read the bearer token from this file, or from stdin with -' });
  caCert = Option.String('--ca-cert', { description: 'Extra trusted root certificate (PEM file), in addition to the system store' });
  pinSha256 = Option.Array('--pin-sha256', {
    description: "Trust a server whose leaf certificate's SPKI SHA-256 matches (base64 or hex; repeatable); replaces chain validation",
  });
  insecure = Option.Boolean('--insecure', false, {
    description: 'Do not verify the server certificate at all (development only; prints a warning)',
  });
  allowCleartext = Option.Boolean('--allow-cleartext', false, {
    description: 'Allow sending the credential over plain http:// to a non-loopback host',
  });
  timeout = Option.String('--timeout', { description: 'Request timeout, e.g. 500ms, 10s, 2m (default 10s)' });
  contextName = Option.String('--context', { description: 'Saved context to use (default: $SERVICE_CONTEXT, then current-context)' });

  /** Timeout without `--timeout`; spec "Limits": 10s on the general client, 30s on agent session and workspace commands. */
  protected defaultTimeoutMs = DEFAULT_TIMEOUT_MS;

  /** Resolves the settings, reading the saved-context file (refused if group/world-readable). */
  protected async settings(): Promise<ClientSettings> {
    // Loaded on demand (yaml here, undici in withClient): `svc version` and `svc openapi` start faster.
    const { configPath, readConfig, selectContext } = await import('./context.js');
    const env = this.context.env;
    const path = configPath(env);
    const saved = selectContext(await readConfig(path), this.contextName ?? (env.SERVICE_CONTEXT || undefined), path);
    return resolveClientSettings(
      {
        server: this.server,
        tenant: this.tenant,
        token: this.token,
        tokenFile: this.tokenFile,
        caCert: this.caCert,
        pinSha256: this.pinSha256,
        insecure: this.insecure,
        allowCleartext: this.allowCleartext,
        timeout: this.timeout,
      },
      env,
      saved,
      this.context.stdin,
      this.defaultTimeoutMs,
    );
  }

  /** Runs `fn` with a connected client and always closes it, so keep-alive sockets do not hold the process. */
  protected async withClient<T>(fn: (client: HttpClient) => Promise<T>): Promise<T> {
    const { HttpClient } = await import('./http-client.js');
    const client = new HttpClient(await this.settings(), {
      stderr: this.context.stderr,
      userAgent: `svc/${buildInfo().version}`,
    });
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }
}

/** Normalises anything thrown into a {@link CliError}: clipanion/typanion usage errors become exit 2. */
export function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof Error && (err as { clipanion?: { type?: string } }).clipanion?.type === 'usage') {
    return new CliError(ExitCode.Usage, 'usage', err.message.replace(/\s+/g, ' ').trim());
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CliError(ExitCode.Err, 'internal', message.replace(/\s+/g, ' ').trim());
}

/** The `-o json` form of a failure: the API error envelope plus the exit code (and HTTP status). */
export function errorDocument(failure: CliError): { error: { code: string; message: string; exit_code: number; http_status?: number } } {
  const status = (failure as { status?: unknown }).status;
  return {
    error: {
      code: failure.code,
      message: failure.message,
      exit_code: failure.exitCode,
      ...(typeof status === 'number' ? { http_status: status } : {}),
    },
  };
}
