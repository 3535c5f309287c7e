import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CP, cpRevisionTable, surfaceOption, type CpRevisionView } from './support.js';

/** `svc claude-policy versions`: the signed revisions of a surface, newest first. */
export class ClaudePolicyVersionsCommand extends ClientCommand {
  static override paths = [['claude-policy', 'versions']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'List the signed revisions of a managed settings surface, newest first (the published one marked)',
  });

  surface = surfaceOption();

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.get(`${CP}/versions`, { query: { surface: this.surface } }))).body as {
      items: CpRevisionView[];
    };
    this.emit(r, (v) => cpRevisionTable(v.items));
    return 0;
  }
}
