/** The `svc claude-policy …` commands, sorted by path; one spread in ../index.ts. */
import type { CommandClass } from 'clipanion';
import { ClaudePolicyArtifactCommand } from './artifact.js';
import { ClaudePolicyCheckinCommand } from './checkin.js';
import { ClaudePolicyDistributionCommand } from './distribution.js';
import { ClaudePolicyDryRunCommand } from './dry-run.js';
import { ClaudePolicyPublishCommand } from './publish.js';
import { ClaudePolicyValidateCommand } from './validate.js';
import { ClaudePolicyVersionsCommand } from './versions.js';

export const claudePolicyCommands: CommandClass[] = [
  ClaudePolicyArtifactCommand,
  ClaudePolicyCheckinCommand,
  ClaudePolicyDistributionCommand,
  ClaudePolicyDryRunCommand,
  ClaudePolicyPublishCommand,
  ClaudePolicyValidateCommand,
  ClaudePolicyVersionsCommand,
];
