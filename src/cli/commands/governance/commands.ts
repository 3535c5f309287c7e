/**
 * The governance commands (`svc claude-hook`, `svc agent managed-settings`, `svc governance …`, `svc hookpep …`), sorted by path; one
 * spread in ../index.ts.
 */
import type { CommandClass } from 'clipanion';
import { AgentManagedSettingsCommand } from '../agent/managed-settings.js';
import { ClaudeHookCommand } from '../claude-hook.js';
import { GovernanceApprovalsApproveCommand } from './approvals/approve.js';
import { GovernanceApprovalsCancelCommand } from './approvals/cancel.js';
import { GovernanceApprovalsGetCommand } from './approvals/get.js';
import { GovernanceApprovalsLsCommand } from './approvals/ls.js';
import { GovernanceApprovalsRejectCommand } from './approvals/reject.js';
import { GovernanceKillSwitchesEngageCommand } from './kill-switches/engage.js';
import { GovernanceKillSwitchesLsCommand } from './kill-switches/ls.js';
import { GovernanceKillSwitchesReleaseCommand } from './kill-switches/release.js';
import { HookpepDryRunCommand } from '../hookpep/dry-run.js';
import { HookpepExplainCommand } from '../hookpep/explain.js';
import { HookpepPublishCommand } from '../hookpep/publish.js';
import { HookpepRollbackCommand } from '../hookpep/rollback.js';
import { HookpepValidateCommand } from '../hookpep/validate.js';
import { HookpepVersionsCommand } from '../hookpep/versions.js';

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
