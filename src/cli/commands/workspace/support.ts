/** Shared pieces of the `svc workspace` commands: the workspace shape, its renderings, the body flags. */
import { Option } from 'clipanion';
import { ClientCommand } from '../../client/base-command.js';
import { CliUsageError } from '../../client/errors.js';
import { fields, table } from '../auth/support.js';

export type WorkspaceView = {
  id: string;
  display_name: string;
  root_path: string;
  mount_mode: string;
  dlp_posture: string;
  read_cap_bytes: number;
  effective_read_cap_bytes: number;
  restricted_subpaths: string[];
  mount_target: string;
  version: number;
  created_at: string;
  updated_at: string;
};

export function workspaceTable(items: WorkspaceView[]): string {
  return table(items, [
    ['id', (w) => w.id],
    ['name', (w) => w.display_name],
    ['root', (w) => w.root_path],
    ['mode', (w) => w.mount_mode],
    ['dlp', (w) => w.dlp_posture],
    ['v', (w) => w.version],
  ]);
}

export function workspaceFields(w: WorkspaceView): string {
  return fields(w as unknown as Record<string, unknown>);
}

/** The settable fields of create and update, as flags. */
export abstract class WorkspaceBodyCommand extends ClientCommand {
  displayName = Option.String('--display-name', { description: 'Name shown in lists (default: the last segment of the root path)' });
  mountMode = Option.String('--mount-mode', { description: 'rw (default) or ro' });
  dlpPosture = Option.String('--dlp-posture', { description: 'DLP posture on reads: label (default), deny or off' });
  readCap = Option.String('--read-cap-bytes', { description: 'Per-read size cap in bytes; 0 means the default 5 MiB' });
  restrict = Option.Array('--restricted-subpath', {
    description: 'A subpath (relative to the root) agents may not read (repeatable; on update replaces the list)',
  });
  mountTarget = Option.String('--mount-target', { description: 'Container mount target (default /workspace)' });

  protected bodyFields(): Record<string, unknown> {
    let cap: number | undefined;
    if (this.readCap !== undefined) {
      cap = Number(this.readCap);
      if (!Number.isInteger(cap) || cap < 0)
        throw new CliUsageError(`--read-cap-bytes takes a whole number of bytes, got ${JSON.stringify(this.readCap)}`);
    }
    const body = {
      display_name: this.displayName,
      mount_mode: this.mountMode,
      dlp_posture: this.dlpPosture,
      read_cap_bytes: cap,
      restricted_subpaths: this.restrict,
      mount_target: this.mountTarget,
    };
    return JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  }
}
