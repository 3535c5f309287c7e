import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import type { Page } from '../auth/support.js';
import { workspaceTable, type WorkspaceView } from './support.js';

/** `svc workspace ls`: a page of governed workspaces. */
export class WorkspaceLsCommand extends ClientCommand {
  static override paths = [['workspace', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Workspaces',
    description: 'List governed workspaces (GET /v1/workspaces)',
    examples: [['First page', '$0 workspace ls']],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor (from the previous page)' });

  async execute(): Promise<number> {
    const page = (await this.withClient((c) => c.get('/v1/workspaces', { query: { limit: this.limit, cursor: this.cursor } })))
      .body as Page<WorkspaceView>;
    this.emit(page, (p) => `${workspaceTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
