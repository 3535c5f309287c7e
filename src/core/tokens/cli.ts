/**
 * The `svc tokens …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { TokensIssueCommand } from '../../cli/commands/tokens/issue.js';
import { TokensLsCommand } from '../../cli/commands/tokens/ls.js';
import { TokensRevokeCommand } from '../../cli/commands/tokens/revoke.js';
import { TokensRotateCommand } from '../../cli/commands/tokens/rotate.js';

export const tokensCommands: CommandClass[] = [TokensIssueCommand, TokensLsCommand, TokensRevokeCommand, TokensRotateCommand];
