/**
 * The `svc auth login|logout|whoami` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AuthLoginCommand } from '../../cli/commands/auth/login.js';
import { AuthLogoutCommand } from '../../cli/commands/auth/logout.js';
import { AuthWhoamiCommand } from '../../cli/commands/auth/whoami.js';

export const authCommands: CommandClass[] = [AuthLoginCommand, AuthLogoutCommand, AuthWhoamiCommand];
