import { Option } from 'clipanion';
import { BaseCommand } from '../../client/base-command.js';
import { WorkspaceBodyCommand, workspaceFields, type WorkspaceView } from './support.js';

/** `svc workspace create`: register a governed workspace. */
export class WorkspaceCreateCommand extends WorkspaceBodyCommand {
  static override paths = [['workspace', 'create']];

  static override usage = BaseCommand.Usage({
    category: 'Workspaces',
    description: 'Register a governed workspace (POST /v1/workspaces); defaults: rw, DLP label, 5 MiB per read, mounted at /workspace',
    examples: [
      ['A read-only repository', '$0 workspace create --root-path /srv/repos/payments --mount-mode ro --restricted-subpath secrets'],
    ],
  });

  rootPath = Option.String('--root-path', { required: true, description: 'Absolute path of the workspace root on the host' });

  async execute(): Promise<number> {
    const ws = (
      await this.withClient((c) => c.request('POST', '/v1/workspaces', { body: { root_path: this.rootPath, ...this.bodyFields() } }))
    ).body as WorkspaceView;
    this.emit(ws, workspaceFields);
    return 0;
  }
}
