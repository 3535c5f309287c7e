/**
 * The `svc capabilities …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { CapabilitiesConfigsCheckCommand } from '../../cli/commands/capabilities/configs/check.js';
import { CapabilitiesConfigsCreateCommand } from '../../cli/commands/capabilities/configs/create.js';
import { CapabilitiesConfigsGetCommand } from '../../cli/commands/capabilities/configs/get.js';
import { CapabilitiesConfigsLsCommand } from '../../cli/commands/capabilities/configs/ls.js';
import { CapabilitiesConfigsReplaceCommand } from '../../cli/commands/capabilities/configs/replace.js';
import { CapabilitiesConfigsRevisionsCommand } from '../../cli/commands/capabilities/configs/revisions.js';
import { CapabilitiesConfigsRmCommand } from '../../cli/commands/capabilities/configs/rm.js';

export const capabilitiesCommands: CommandClass[] = [
  CapabilitiesConfigsCheckCommand,
  CapabilitiesConfigsCreateCommand,
  CapabilitiesConfigsGetCommand,
  CapabilitiesConfigsLsCommand,
  CapabilitiesConfigsReplaceCommand,
  CapabilitiesConfigsRevisionsCommand,
  CapabilitiesConfigsRmCommand,
];
