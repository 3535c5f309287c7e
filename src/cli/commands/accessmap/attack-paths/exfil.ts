import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../../client/base-command.js';
import { resolveRef } from '../../../client/resolve.js';
import { table } from '../../auth/support.js';
import { budgetOption, pathLine, totalLine, type ExtentView, type PathView } from '../support.js';

type Answer = { items: Array<{ principal: { kind: string; name: string | null; id: string }; mode: string; path: PathView }> } & ExtentView;

/** `svc accessmap attack-paths exfil`: who can come to read a resource. */
export class AccessmapExfilCommand extends ClientCommand {
  static override paths = [['accessmap', 'attack-paths', 'exfil']];

  static override usage = BaseCommand.Usage({
    category: 'Access map',
    description: 'Principals that can come to read a resource, with their paths (GET /v1/m/accessmap/attack-paths/exfil)',
    examples: [['Who could exfiltrate the payroll bucket', '$0 accessmap attack-paths exfil --resource-id <id>']],
  });

  resourceId = Option.String('--resource-id', {
    required: true,
    description: 'The resource: its id, name or natural key (e.g. s3://bucket)',
  });
  maxDepth = Option.String('--max-depth', { description: 'Principal hops searched, 1..8 (default 6)' });
  limit = Option.String('--limit', { description: 'Principals returned 1..1000; 0 (default) means the engine default' });
  budget = budgetOption();

  async execute(): Promise<number> {
    const res = (
      await this.withClient(async (c) => {
        const ref = await resolveRef(c, this.resourceId, ['resource'], '--resource-id');
        return c.get('/v1/m/accessmap/attack-paths/exfil', {
          query: { resource_id: ref.id, max_depth: this.maxDepth, limit: this.limit, budget: this.budget },
        });
      })
    ).body as Answer;
    this.emit(
      res,
      (r) =>
        `${table(r.items, [
          ['principal', (i) => `${i.principal.kind}:${i.principal.name ?? i.principal.id}`],
          ['mode', (i) => i.mode],
          ['hops', (i) => i.path.length],
          ['path', (i) => pathLine(i.path)],
        ])}\n${totalLine(r)}`,
    );
    return 0;
  }
}
