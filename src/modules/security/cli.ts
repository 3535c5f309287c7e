/**
 * The `svc findings …` and `svc security …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { SecurityEvaluateCommand } from '../../cli/commands/security/evaluate.js';
import { FindingsEvidenceCommand } from '../../cli/commands/findings/evidence.js';
import { FindingsExportCommand } from '../../cli/commands/findings/export.js';
import { FindingsGetCommand } from '../../cli/commands/findings/get.js';
import { FindingsLsCommand } from '../../cli/commands/findings/ls.js';
import { FindingsTriageCommand } from '../../cli/commands/findings/triage.js';

export const securityCommands: CommandClass[] = [
  FindingsEvidenceCommand,
  FindingsExportCommand,
  FindingsGetCommand,
  FindingsLsCommand,
  FindingsTriageCommand,
  SecurityEvaluateCommand,
];
