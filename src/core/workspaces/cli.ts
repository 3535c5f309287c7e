/**
 * The `svc workspace …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { WorkspaceCreateCommand } from '../../cli/commands/workspace/create.js';
import { WorkspaceGetCommand } from '../../cli/commands/workspace/get.js';
import { WorkspaceLsCommand } from '../../cli/commands/workspace/ls.js';
import { WorkspaceUpdateCommand } from '../../cli/commands/workspace/update.js';

export const workspacesCommands: CommandClass[] = [WorkspaceCreateCommand, WorkspaceGetCommand, WorkspaceLsCommand, WorkspaceUpdateCommand];
