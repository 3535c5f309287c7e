/**
 * The `svc auth bootstrap` command (POST /v1/setup, then a login), sorted by path: the manifest's `cli` (index.ts), spread in
 * the CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AuthBootstrapCommand } from '../../cli/commands/auth/bootstrap.js';

export const setupCommands: CommandClass[] = [AuthBootstrapCommand];
