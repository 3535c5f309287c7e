import type { CommandClass } from 'clipanion';
import { accessmapCommands } from '../../modules/accessmap/cli.js';
import { AgentCreateCommand } from './agent/create.js';
import { AgentGetCommand } from './agent/get.js';
import { AgentLsCommand } from './agent/ls.js';
import { AgentRmCommand } from './agent/rm.js';
import { AgentUpdateCommand } from './agent/update.js';
import { AuditCheckpointCommand } from './audit/checkpoint.js';
import { AuditExportCommand } from './audit/export.js';
import { AuditVerifyCommand } from './audit/verify.js';
import { AuthBootstrapCommand } from './auth/bootstrap.js';
import { AuthLoginCommand } from './auth/login.js';
import { AuthLogoutCommand } from './auth/logout.js';
import { AuthWhoamiCommand } from './auth/whoami.js';
import { CollectorCommand } from './collector.js';
import { CompletionCommand } from './completion.js';
import { complianceCommands } from '../../modules/compliance/cli.js';
import { ConfigCurrentContextCommand } from './config/current-context.js';
import { ConfigDeleteContextCommand } from './config/delete-context.js';
import { ConfigGetContextsCommand } from './config/get-contexts.js';
import { ConfigUseContextCommand } from './config/use-context.js';
import { governanceCommands } from '../../modules/governance/cli.js';
import { claudePolicyCommands } from '../../modules/claude-policy/cli.js';
import { capabilitiesCommands } from '../../modules/capabilities/cli.js';
import { observabilityCommands } from '../../modules/observability/cli.js';
import { securityCommands } from '../../modules/security/cli.js';
import { eventingCommands } from '../../modules/eventing/cli.js';
import { ssoCommands } from './sso/commands.js';
import { HealthCommand } from './health.js';
import { KeysLsCommand } from './keys/ls.js';
import { KeysRotateCommand } from './keys/rotate.js';
import { BackupCommand } from './backup.js';
import { ConfigEffectiveCommand } from './config/effective.js';
import { SecretsLsCommand } from './secrets/ls.js';
import {
  ConnectorGetCommand,
  ConnectorHealthCommand,
  ConnectorLsCommand,
  ConnectorRedeliverCommand,
  ConnectorRmCommand,
  ConnectorSetCommand,
  ConnectorTestCommand,
} from './connector/commands.js';
import { SourcesLsCommand, SourcesRmCommand, SourcesSetCommand } from './sources/commands.js';
import { SecretsRmCommand } from './secrets/rm.js';
import { SecretsSetCommand } from './secrets/set.js';
import { SupportBundleCommand } from './support/bundle.js';
import { SupportLicenseCommand } from './support/license.js';
import { SupportStatusCommand } from './support/status.js';
import { SupportUpdateCheckCommand } from './support/update-check.js';
import { BenchPlanCommand } from './bench/plan.js';
import { BenchRunCommand } from './bench/run.js';
import { OpenapiCommand } from './openapi.js';
import { SearchCommand } from './search.js';
import { StatusCommand } from './status.js';
import { SuperadminDisableCommand } from './superadmin/disable.js';
import { SuperadminEnableCommand } from './superadmin/enable.js';
import { SuperadminLsCommand } from './superadmin/ls.js';
import { TenantsCreateCommand } from './tenants/create.js';
import { TenantsLsCommand } from './tenants/ls.js';
import { TenantsRmCommand } from './tenants/rm.js';
import { TenantsSetRegionCommand } from './tenants/set-region.js';
import { TenantsSetStatusCommand } from './tenants/set-status.js';
import { TokensIssueCommand } from './tokens/issue.js';
import { TokensLsCommand } from './tokens/ls.js';
import { TokensRevokeCommand } from './tokens/revoke.js';
import { TokensRotateCommand } from './tokens/rotate.js';
import { UsersCreateCommand } from './users/create.js';
import { UsersDisableCommand } from './users/disable.js';
import { UsersEnableCommand } from './users/enable.js';
import { UsersLsCommand } from './users/ls.js';
import { VersionCommand } from './version.js';
import { WorkspaceCreateCommand } from './workspace/create.js';
import { WorkspaceGetCommand } from './workspace/get.js';
import { WorkspaceLsCommand } from './workspace/ls.js';
import { WorkspaceUpdateCommand } from './workspace/update.js';
// `svc serve` is written by the serve area (src/serve); its class lives at the command path.
import { ServeCommand } from './serve.js';

/**
 * Every `svc` command, listed explicitly (STYLE rule 6: the file path is the command path, e.g.
 * `commands/audit/verify.ts` is `svc audit verify`). A module's commands come from its light `cli.ts`
 * (`src/modules/<ns>/cli.ts`, also its manifest's `cli`), one spread each. Add new commands here, sorted by path.
 */
export const commands: CommandClass[] = [
  ...accessmapCommands,
  AgentCreateCommand,
  AgentGetCommand,
  AgentLsCommand,
  AgentRmCommand,
  AgentUpdateCommand,
  AuditCheckpointCommand,
  AuditExportCommand,
  AuditVerifyCommand,
  AuthBootstrapCommand,
  AuthLoginCommand,
  AuthLogoutCommand,
  AuthWhoamiCommand,
  BackupCommand,
  BenchPlanCommand,
  BenchRunCommand,
  CollectorCommand,
  CompletionCommand,
  ...complianceCommands,
  ConfigCurrentContextCommand,
  ConfigEffectiveCommand,
  ConfigDeleteContextCommand,
  ConfigGetContextsCommand,
  ConfigUseContextCommand,
  ...governanceCommands,
  ...claudePolicyCommands,
  ...capabilitiesCommands,
  ...securityCommands,
  ...observabilityCommands,
  ...eventingCommands,
  HealthCommand, KeysLsCommand, KeysRotateCommand, OpenapiCommand, SearchCommand, ServeCommand, StatusCommand,
  SecretsLsCommand,
  ConnectorLsCommand,
  ConnectorGetCommand,
  ConnectorSetCommand,
  ConnectorRmCommand,
  ConnectorTestCommand,
  ConnectorHealthCommand,
  ConnectorRedeliverCommand,
  SourcesLsCommand,
  SourcesSetCommand,
  SourcesRmCommand,
  SecretsRmCommand,
  SecretsSetCommand,
  ...ssoCommands,
  SuperadminDisableCommand,
  SuperadminEnableCommand,
  SuperadminLsCommand,
  SupportBundleCommand,
  SupportLicenseCommand,
  SupportStatusCommand,
  SupportUpdateCheckCommand,
  TenantsCreateCommand,
  TenantsLsCommand,
  TenantsRmCommand,
  TenantsSetRegionCommand,
  TenantsSetStatusCommand,
  TokensIssueCommand,
  TokensLsCommand,
  TokensRevokeCommand,
  TokensRotateCommand,
  UsersCreateCommand,
  UsersDisableCommand,
  UsersEnableCommand,
  UsersLsCommand,
  VersionCommand,
  WorkspaceCreateCommand,
  WorkspaceGetCommand,
  WorkspaceLsCommand,
  WorkspaceUpdateCommand,
];
