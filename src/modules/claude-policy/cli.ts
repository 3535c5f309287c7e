/**
 * The `svc claude-policy …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { ClaudePolicyArtifactCommand } from '../../cli/commands/claude-policy/artifact.js';
import { ClaudePolicyCheckinCommand } from '../../cli/commands/claude-policy/checkin.js';
import { ClaudePolicyDistributionCommand } from '../../cli/commands/claude-policy/distribution.js';
import { ClaudePolicyDryRunCommand } from '../../cli/commands/claude-policy/dry-run.js';
import { ClaudePolicyPublishCommand } from '../../cli/commands/claude-policy/publish.js';
import { ClaudePolicyValidateCommand } from '../../cli/commands/claude-policy/validate.js';
import { ClaudePolicyVersionsCommand } from '../../cli/commands/claude-policy/versions.js';

export const claudePolicyCommands: CommandClass[] = [
  ClaudePolicyArtifactCommand,
  ClaudePolicyCheckinCommand,
  ClaudePolicyDistributionCommand,
  ClaudePolicyDryRunCommand,
  ClaudePolicyPublishCommand,
  ClaudePolicyValidateCommand,
  ClaudePolicyVersionsCommand,
];
