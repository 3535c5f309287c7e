import { BaseCommand } from '../../client/base-command.js';
import type { Page } from '../auth/support.js';
import { EdgeFilterCommand, edgeTable, type EdgeView } from './support.js';

/** `svc accessmap graph`: access-graph edges under filters. */
export class AccessmapGraphCommand extends EdgeFilterCommand {
  static override paths = [['accessmap', 'graph']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: 'List access-graph edges (GET /v1/m/accessmap/graph); a privileged, audited read',
    details:
      'Each edge is one (origin, resource, mode): permitted by a grant, observed by a signal source, or both, with attribution ' +
      'confidence and counts. Editor role or above.',
    examples: [
      ['Writes observed with high confidence', '$0 accessmap graph --mode rw --confidence high'],
      ['Everything one agent touches, as JSON', '$0 accessmap graph --origin-kind agent --origin-id <id> -o json'],
    ],
  });

  async execute(): Promise<number> {
    const page = (await this.withClient(async (c) => c.get('/v1/m/accessmap/graph', { query: await this.filterQuery(c) })))
      .body as Page<EdgeView>;
    this.emit(page, (p) => `${edgeTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
