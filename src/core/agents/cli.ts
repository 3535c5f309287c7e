/**
 * The `svc agent …` commands of the agents API (`svc agent managed-settings` is governance's), sorted by path: the manifest's
 * `cli` (index.ts), spread in the CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server
 * code.
 */
import type { CommandClass } from 'clipanion';
import { AgentCreateCommand } from '../../cli/commands/agent/create.js';
import { AgentGetCommand } from '../../cli/commands/agent/get.js';
import { AgentLsCommand } from '../../cli/commands/agent/ls.js';
import { AgentRmCommand } from '../../cli/commands/agent/rm.js';
import { AgentUpdateCommand } from '../../cli/commands/agent/update.js';

export const agentsCommands: CommandClass[] = [AgentCreateCommand, AgentGetCommand, AgentLsCommand, AgentRmCommand, AgentUpdateCommand];
