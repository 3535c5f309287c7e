/**
 * The governance commands (`svc claude-hook`, `svc agent managed-settings`, `svc governance …`, `svc hookpep …`), sorted by
 * path: the manifest's `cli` (index.ts), spread in the CLI index (src/cli/commands/index.ts). A light file: command classes
 * only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AgentManagedSettingsCommand } from '../../cli/commands/agent/managed-settings.js';
import { ClaudeHookCommand } from '../../cli/commands/claude-hook.js';
import { GovernanceApprovalsApproveCommand } from '../../cli/commands/governance/approvals/approve.js';
import { GovernanceApprovalsCancelCommand } from '../../cli/commands/governance/approvals/cancel.js';
import { GovernanceApprovalsGetCommand } from '../../cli/commands/governance/approvals/get.js';
import { GovernanceApprovalsLsCommand } from '../../cli/commands/governance/approvals/ls.js';
import { GovernanceApprovalsRejectCommand } from '../../cli/commands/governance/approvals/reject.js';
import { GovernanceKillSwitchesEngageCommand } from '../../cli/commands/governance/kill-switches/engage.js';
import { GovernanceKillSwitchesLsCommand } from '../../cli/commands/governance/kill-switches/ls.js';
import { GovernanceKillSwitchesReleaseCommand } from '../../cli/commands/governance/kill-switches/release.js';
import { HookpepDryRunCommand } from '../../cli/commands/hookpep/dry-run.js';
import { HookpepExplainCommand } from '../../cli/commands/hookpep/explain.js';
import { HookpepPublishCommand } from '../../cli/commands/hookpep/publish.js';
import { HookpepRollbackCommand } from '../../cli/commands/hookpep/rollback.js';
import { HookpepValidateCommand } from '../../cli/commands/hookpep/validate.js';
import { HookpepVersionsCommand } from '../../cli/commands/hookpep/versions.js';

export const governanceCommands: CommandClass[] = [
  AgentManagedSettingsCommand,
  ClaudeHookCommand,
  GovernanceApprovalsApproveCommand,
  GovernanceApprovalsCancelCommand,
  GovernanceApprovalsGetCommand,
  GovernanceApprovalsLsCommand,
  GovernanceApprovalsRejectCommand,
  GovernanceKillSwitchesEngageCommand,
  GovernanceKillSwitchesLsCommand,
  GovernanceKillSwitchesReleaseCommand,
  HookpepDryRunCommand,
  HookpepExplainCommand,
  HookpepPublishCommand,
  HookpepRollbackCommand,
  HookpepValidateCommand,
  HookpepVersionsCommand,
];
