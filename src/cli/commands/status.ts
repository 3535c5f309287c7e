import { BaseCommand, ClientCommand } from '../client/base-command.js';
import { CliError } from '../client/errors.js';
import { ExitCode } from '../client/exit-codes.js';
import type { HttpClient } from '../client/http-client.js';

type StatusDocument = { status: string; [key: string]: unknown };

/** `svc status`: the server's public status document; exit 7 unless it is fully `ok`. */
export class StatusCommand extends ClientCommand {
  static override paths = [['status']];

  static override usage = BaseCommand.Usage({
    category: 'Server',
    description: "Show the server's public status document (GET /status)",
    details: `
      Prints the overall status and the state of each component. Exits 0 when the overall status
      is \`ok\`, 7 (Degraded) when it is anything else (\`degraded\`, \`down\`, or
      \`setup_required\` while the server waits for its one-time setup token, read from
      \`GET /v1/server-info\`), 8 (Indeterminate) when the document carries no status, and 6 when
      the server cannot be reached.

      With \`-o json\` the output is the status document as the server sent it; on a server that
      needs setup its \`status\` is \`setup_required\`, with \`setup_required: true\` and the
      components' verdict kept in \`server_status\`.
    `,
    examples: [
      ['Check a server', '$0 status --server https://cp.example.com:8443'],
      [
        'Local server with its self-signed certificate pinned',
        '$0 status --server https://127.0.0.1:8443 --pin-sha256 <pin_sha256 from the serve log>',
      ],
    ],
  });

  async execute(): Promise<number> {
    const [response, setupRequired] = await this.withClient(
      async (client) => [await client.get('/status'), await needsSetup(client)] as const,
    );
    const doc = response.body;
    if (typeof doc !== 'object' || doc === null || typeof (doc as { status?: unknown }).status !== 'string') {
      throw new CliError(
        ExitCode.Indeterminate,
        'indeterminate',
        'the server answered /status without a status field; its state is unknown',
      );
    }
    let status = doc as StatusDocument;
    // A server that answers 409 setup_required on every route is not usable, however healthy its parts.
    if (setupRequired) status = { ...status, status: 'setup_required', server_status: status.status, setup_required: true };
    this.emit(status, renderStatus);
    return status.status === 'ok' ? ExitCode.OK : ExitCode.Degraded;
  }
}

/** Whether the server still waits for its setup token; unknown (an older server, an error) counts as no. */
async function needsSetup(client: HttpClient): Promise<boolean> {
  try {
    return ((await client.get('/v1/server-info')).body as { setup_required?: unknown }).setup_required === true;
  } catch {
    return false;
  }
}

function renderStatus(doc: StatusDocument): string {
  const lines = [`status:  ${doc.status}`];
  if (doc.status === 'setup_required')
    lines.push('  no user yet: redeem the setup token svc serve printed at first start with svc auth bootstrap (see README)');
  if (typeof doc.version === 'string') lines.push(`version: ${doc.version}`);
  if (typeof doc.uptime_seconds === 'number') lines.push(`uptime:  ${doc.uptime_seconds}s`);
  const components = doc.components;
  if (typeof components === 'object' && components !== null) {
    const entries = Object.entries(components as Record<string, unknown>);
    const width = Math.max(...entries.map(([name]) => name.length));
    for (const [name, value] of entries) {
      const { status, ...rest } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
      const extra = Object.values(rest).filter((v) => typeof v === 'string' || typeof v === 'number');
      lines.push(`  ${name.padEnd(width)}  ${String(status ?? 'unknown')}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`);
    }
  }
  return lines.join('\n');
}
