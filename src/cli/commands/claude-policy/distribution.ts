import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { fields, table } from '../auth/support.js';
import { CP, surfaceOption } from './support.js';

type DistributionView = {
  surface: string;
  published: { revision: number; sha256: string } | null;
  hosts: Array<{ host: string; revision: number | null; verified: boolean; current: boolean; checked_in_at: string; reason: string }>;
  summary: { hosts: number; current: number; stale: number; unverified: number };
};

/** `svc claude-policy distribution`: published vs observed per host. */
export class ClaudePolicyDistributionCommand extends ClientCommand {
  static override paths = [['claude-policy', 'distribution']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Published vs observed: the published revision of a surface and what each host last checked in',
  });

  surface = surfaceOption();

  async execute(): Promise<number> {
    const d = (await this.withClient((c) => c.get(`${CP}/distribution`, { query: { surface: this.surface } }))).body as DistributionView;
    this.emit(
      d,
      (v) => {
        const published = v.published ? `${v.published.revision} (${v.published.sha256.slice(0, 16)})` : '(none)';
        return `${fields({ surface: v.surface, published, ...v.summary })}\n\n${table(v.hosts, [
          ['host', (h) => h.host],
          ['revision', (h) => h.revision ?? '-'],
          ['verified', (h) => h.verified],
          ['current', (h) => h.current],
          ['checked in', (h) => h.checked_in_at],
        ])}`;
      },
    );
    return 0;
  }
}
