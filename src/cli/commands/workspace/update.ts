import { Option } from 'clipanion';
import { BaseCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { resolveRef } from '../../client/resolve.js';
import { WorkspaceBodyCommand, workspaceFields, type WorkspaceView } from './support.js';

/** `svc workspace update <workspace>`: merge-patch a workspace with optimistic concurrency. */
export class WorkspaceUpdateCommand extends WorkspaceBodyCommand {
  static override paths = [['workspace', 'update']];

  static override usage = BaseCommand.Usage({
    category: 'Workspaces',
    description: 'Change a workspace (PATCH /v1/workspaces/{id}) by id, display name or root path: only the given fields change',
    details:
      'The change is based on `--version`; without it the current version is read first. If the workspace changed in between, the ' +
      'server answers 409 (exit 5) and nothing is changed.',
    examples: [['Make it read-only', '$0 workspace update payments-service --mount-mode ro']],
  });

  workspace = Option.String({ name: 'workspace', required: true });
  version = Option.String('--version', { description: 'The version the change is based on (default: the current one)' });
  rootPath = Option.String('--root-path', { description: 'New root path' });

  async execute(): Promise<number> {
    const changes = { ...(this.rootPath !== undefined ? { root_path: this.rootPath } : {}), ...this.bodyFields() };
    if (Object.keys(changes).length === 0)
      throw new CliUsageError('nothing to change: give at least one field flag (see svc workspace update --help)');
    const ws = await this.withClient(async (c) => {
      const path = `/v1/workspaces/${(await resolveRef(c, this.workspace, ['workspace'], 'workspace')).id}`;
      const version = this.version !== undefined ? Number(this.version) : ((await c.get(path)).body as WorkspaceView).version;
      return (await c.request('PATCH', path, { body: { version, ...changes } })).body as WorkspaceView;
    });
    this.emit(ws, workspaceFields);
    return 0;
  }
}
