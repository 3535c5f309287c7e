import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { ExitCode } from '../../client/exit-codes.js';

interface Step {
  id: string;
  title: string;
  applicable: boolean;
  completed: boolean;
  why: string;
}

/** `svc support status`: GET /v1/console/setup-status and /v1/console/health-summary in one view. */
export class SupportStatusCommand extends ClientCommand {
  static override paths = [['support', 'status']];

  static override usage = BaseCommand.Usage({
    category: 'Console',
    description:
      'The deployment checklist (first admin, trusted TLS, audit key backup, ledger forwarding, SSO, dual control) and the health summary',
    details: 'Exit 7 when the server is not healthy and ready.',
    examples: [['Show', '$0 support status']],
  });

  async execute(): Promise<number> {
    const [setup, health] = await this.withClient(async (c) => [
      (await c.get('/v1/console/setup-status')).body as { complete: boolean; steps: Step[] },
      (await c.get('/v1/console/health-summary')).body as Record<string, any>,
    ]);
    this.emit({ setup, health }, (v) =>
      [
        `healthy ${v.health['healthy']}, ready ${v.health['ready']}, version ${v.health['version']}, store ` +
          `${v.health['store']?.engine}${v.health['tls'] ? `, TLS ${v.health['tls'].days_left} days left` : ''}, update ` +
          `${v.health['update']?.status}`,
        ...v.setup.steps.map((s) => `[${!s.applicable ? '-' : s.completed ? 'x' : ' '}] ${s.title}: ${s.why}`),
      ].join('\n'),
    );
    return health['healthy'] === true && health['ready'] === true ? ExitCode.OK : ExitCode.Degraded;
  }
}
