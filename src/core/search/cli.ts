/**
 * The `svc search` command: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { SearchCommand } from '../../cli/commands/search.js';

export const searchCommands: CommandClass[] = [SearchCommand];
