import { Option } from 'clipanion';
import { BaseCommand } from '../../client/base-command.js';
import type { Page } from '../auth/support.js';
import { EdgeFilterCommand, edgeTable, type EdgeView } from './support.js';

type DriftView = EdgeView & { drift: string; drift_confidence: string; basis: string };

/** `svc accessmap drift`: unexpected accesses and unused grants. */
export class AccessmapDriftCommand extends EdgeFilterCommand {
  static override paths = [['accessmap', 'drift']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: 'Drift between what is permitted and what is observed (GET /v1/m/accessmap/drift)',
    details: `
      \`unexpected\`: observed but no grant covers it. \`unused\`: granted but never observed in a mode that
      uses it. Each finding states its confidence and why: an unused grant is never more than
      \`medium\` (absence of a signal is not proof), and an access attributed through a shared
      identity is never more than \`low\`. \`--confidence\` filters on that stated confidence.
    `,
    examples: [
      ['Unexpected accesses we are sure about', '$0 accessmap drift --kind unexpected --confidence high'],
      ['All drift as JSON', '$0 accessmap drift -o json'],
    ],
  });

  kind = Option.String('--kind', { description: 'Only this kind of drift: unexpected or unused' });

  async execute(): Promise<number> {
    const page = (
      await this.withClient(async (c) => c.get('/v1/m/accessmap/drift', { query: { ...(await this.filterQuery(c)), drift: this.kind } }))
    ).body as Page<DriftView>;
    this.emit(
      page,
      (p) =>
        `${edgeTable(p.items, [
          ['drift', (d) => d.drift],
          ['drift conf.', (d) => d.drift_confidence],
        ])}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`,
    );
    return 0;
  }
}
