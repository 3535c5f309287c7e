/**
 * The `svc superadmin …` and `svc users …` commands (both on /v1/users), sorted by path: the manifest's `cli` (index.ts),
 * spread in the CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { SuperadminDisableCommand } from '../../cli/commands/superadmin/disable.js';
import { SuperadminEnableCommand } from '../../cli/commands/superadmin/enable.js';
import { SuperadminLsCommand } from '../../cli/commands/superadmin/ls.js';
import { UsersCreateCommand } from '../../cli/commands/users/create.js';
import { UsersDisableCommand } from '../../cli/commands/users/disable.js';
import { UsersEnableCommand } from '../../cli/commands/users/enable.js';
import { UsersLsCommand } from '../../cli/commands/users/ls.js';

export const usersCommands: CommandClass[] = [
  SuperadminDisableCommand,
  SuperadminEnableCommand,
  SuperadminLsCommand,
  UsersCreateCommand,
  UsersDisableCommand,
  UsersEnableCommand,
  UsersLsCommand,
];
