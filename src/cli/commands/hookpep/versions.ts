import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { PDP, revisionTable, surfaceOption, type RevisionView } from './support.js';

/** `svc hookpep versions`: the signed revisions of a surface, newest first. */
export class HookpepVersionsCommand extends ClientCommand {
  static override paths = [['hookpep', 'versions']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'List the signed policy revisions, newest first (the active one marked)',
  });

  surface = surfaceOption();

  async execute(): Promise<number> {
    const r = (await this.withClient((c) => c.get(`${PDP}/versions`, { query: { surface: this.surface } }))).body as {
      items: RevisionView[];
    };
    this.emit(r, (v) => revisionTable(v.items));
    return 0;
  }
}
