/**
 * The `svc connector …` and `svc sources …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import {
  ConnectorGetCommand,
  ConnectorHealthCommand,
  ConnectorLsCommand,
  ConnectorRedeliverCommand,
  ConnectorRmCommand,
  ConnectorSetCommand,
  ConnectorTestCommand,
} from '../../cli/commands/connector/commands.js';
import { SourcesLsCommand, SourcesRmCommand, SourcesSetCommand } from '../../cli/commands/sources/commands.js';

export const connectorsCommands: CommandClass[] = [
  ConnectorGetCommand,
  ConnectorHealthCommand,
  ConnectorLsCommand,
  ConnectorRedeliverCommand,
  ConnectorRmCommand,
  ConnectorSetCommand,
  ConnectorTestCommand,
  SourcesLsCommand,
  SourcesRmCommand,
  SourcesSetCommand,
];
