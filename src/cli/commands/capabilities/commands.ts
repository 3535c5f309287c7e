/** The `svc capabilities …` commands, sorted by path; one spread in ../index.ts. */
import type { CommandClass } from 'clipanion';
import { CapabilitiesConfigsCheckCommand } from './configs/check.js';
import { CapabilitiesConfigsCreateCommand } from './configs/create.js';
import { CapabilitiesConfigsGetCommand } from './configs/get.js';
import { CapabilitiesConfigsLsCommand } from './configs/ls.js';
import { CapabilitiesConfigsReplaceCommand } from './configs/replace.js';
import { CapabilitiesConfigsRevisionsCommand } from './configs/revisions.js';
import { CapabilitiesConfigsRmCommand } from './configs/rm.js';

export const capabilitiesCommands: CommandClass[] = [
  CapabilitiesConfigsCheckCommand,
  CapabilitiesConfigsCreateCommand,
  CapabilitiesConfigsGetCommand,
  CapabilitiesConfigsLsCommand,
  CapabilitiesConfigsReplaceCommand,
  CapabilitiesConfigsRevisionsCommand,
  CapabilitiesConfigsRmCommand,
];
