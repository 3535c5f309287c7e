import { BaseCommand, ClientCommand } from '../client/base-command.js';
import { apiErrorFrom } from '../client/http-client.js';
import type { ApiResponse } from '../client/http-client.js';
import { ExitCode } from '../client/exit-codes.js';

/** The stable `svc health -o json` document. */
export type HealthReport = {
  ready: boolean;
  healthz: { http_status: number; body: unknown };
  readyz: { http_status: number; body: unknown };
};

/** `svc health`: liveness (`/healthz`) and readiness (`/readyz`); exit 7 when not ready. */
export class HealthCommand extends ClientCommand {
  static override paths = [['health']];

  static override usage = BaseCommand.Usage({
    category: 'Server',
    description: 'Check that the server is up (GET /healthz) and ready (GET /readyz)',
    details: `
      Exits 0 when the server is up and ready, 7 (Degraded) when it answers but is not ready
      (\`/readyz\` answers 503, e.g. store unreachable or migrations pending), and 6 when it cannot be
      reached or \`/healthz\` itself fails with a 5xx.

      With \`-o json\` the output is one object: \`ready\`, and for \`healthz\` and \`readyz\` the HTTP
      status and the raw document the server sent.
    `,
    examples: [['Probe a local server', '$0 health --server https://127.0.0.1:8443 --ca-cert ./data/tls/cert.pem']],
  });

  async execute(): Promise<number> {
    const report = await this.withClient(async (client): Promise<HealthReport> => {
      const healthz = await client.get('/healthz');
      // 503 is how /readyz says "not ready" (DECISIONS: 503 unavailable), an answer, not a failure.
      const readyz = await client.get('/readyz', { acceptStatuses: [503] });
      return { ready: readyz.status >= 200 && readyz.status < 300, healthz: part(healthz), readyz: part(readyz) };
    });
    this.emit(report, renderHealth);
    return report.ready ? ExitCode.OK : ExitCode.Degraded;
  }
}

function part(response: ApiResponse): { http_status: number; body: unknown } {
  return { http_status: response.status, body: response.body };
}

function renderHealth(report: HealthReport): string {
  const live = `healthz: ok (HTTP ${report.healthz.http_status})`;
  if (report.ready) return `${live}\nreadyz:  ready (HTTP ${report.readyz.http_status})`;
  const why = apiErrorFrom(report.readyz.http_status, report.readyz.body);
  return `${live}\nreadyz:  not ready (HTTP ${report.readyz.http_status}): ${why.code}: ${why.message}`;
}
