import type { CommandClass } from 'clipanion';
import { agentsCommands } from '../../core/agents/cli.js';
import { auditExportCommands } from '../../core/audit-export/cli.js';
import { auditCommands } from '../../core/audit/cli.js';
import { authCommands } from '../../core/auth/cli.js';
import { connectorsCommands } from '../../core/connectors/cli.js';
import { consoleCommands } from '../../core/console/cli.js';
import { healthCommands } from '../../core/health/cli.js';
import { searchCommands } from '../../core/search/cli.js';
import { setupCommands } from '../../core/setup/cli.js';
import { systemCommands } from '../../core/system/cli.js';
import { tokensCommands } from '../../core/tokens/cli.js';
import { usersCommands } from '../../core/users/cli.js';
import { workspacesCommands } from '../../core/workspaces/cli.js';
import { accessmapCommands } from '../../modules/accessmap/cli.js';
import { capabilitiesCommands } from '../../modules/capabilities/cli.js';
import { claudePolicyCommands } from '../../modules/claude-policy/cli.js';
import { complianceCommands } from '../../modules/compliance/cli.js';
import { eventingCommands } from '../../modules/eventing/cli.js';
import { governanceCommands } from '../../modules/governance/cli.js';
import { observabilityCommands } from '../../modules/observability/cli.js';
import { securityCommands } from '../../modules/security/cli.js';
import { BackupCommand } from './backup.js';
import { BenchPlanCommand } from './bench/plan.js';
import { BenchRunCommand } from './bench/run.js';
import { CollectorCommand } from './collector.js';
import { CompletionCommand } from './completion.js';
import { ConfigCurrentContextCommand } from './config/current-context.js';
import { ConfigDeleteContextCommand } from './config/delete-context.js';
import { ConfigGetContextsCommand } from './config/get-contexts.js';
import { ConfigUseContextCommand } from './config/use-context.js';
import { KeysLsCommand } from './keys/ls.js';
import { KeysRotateCommand } from './keys/rotate.js';
import { OpenapiCommand } from './openapi.js';
// `svc serve` is written by the serve area (src/serve); its class lives at the command path.
import { ServeCommand } from './serve.js';
import { VersionCommand } from './version.js';

/**
 * Every `svc` command, listed explicitly (STYLE rule 6: the file path is the command path, e.g.
 * `commands/audit/verify.ts` is `svc audit verify`). An area's commands come from its light `cli.ts`
 * (`src/core/<area>/cli.ts`, `src/modules/<ns>/cli.ts`, also its manifest's `cli`), one spread per area
 * in src/routes.ts order; the commands of no area follow, sorted by path. Add a new command to its
 * area's `cli.ts`, or here when it belongs to none.
 */
export const commands: CommandClass[] = [
  ...healthCommands,
  ...setupCommands,
  ...authCommands,
  ...tokensCommands,
  ...usersCommands,
  ...systemCommands,
  ...auditExportCommands,
  ...auditCommands,
  ...agentsCommands,
  ...workspacesCommands,
  ...searchCommands,
  ...accessmapCommands,
  ...governanceCommands,
  ...securityCommands,
  ...observabilityCommands,
  ...eventingCommands,
  ...consoleCommands,
  ...connectorsCommands,
  ...complianceCommands,
  ...claudePolicyCommands,
  ...capabilitiesCommands,
  BackupCommand,
  BenchPlanCommand,
  BenchRunCommand,
  CollectorCommand,
  CompletionCommand,
  ConfigCurrentContextCommand,
  ConfigDeleteContextCommand,
  ConfigGetContextsCommand,
  ConfigUseContextCommand,
  KeysLsCommand,
  KeysRotateCommand,
  OpenapiCommand,
  ServeCommand,
  VersionCommand,
];
