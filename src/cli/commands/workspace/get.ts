import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { resolveRef } from '../../client/resolve.js';
import { workspaceFields, type WorkspaceView } from './support.js';

/** `svc workspace get <workspace>`: one workspace by id, name or root path. */
export class WorkspaceGetCommand extends ClientCommand {
  static override paths = [['workspace', 'get']];

  static override usage = BaseCommand.Usage({
    category: 'Workspaces',
    description: 'Show one workspace (GET /v1/workspaces/{id}) by id, display name or root path',
    examples: [['By name', '$0 workspace get payments-service']],
  });

  workspace = Option.String({ name: 'workspace', required: true });

  async execute(): Promise<number> {
    const ws = (
      await this.withClient(async (c) => c.get(`/v1/workspaces/${(await resolveRef(c, this.workspace, ['workspace'], 'workspace')).id}`))
    ).body as WorkspaceView;
    this.emit(ws, workspaceFields);
    return 0;
  }
}
