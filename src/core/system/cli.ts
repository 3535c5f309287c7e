/**
 * The `svc tenants …` commands (/v1/system/orgs), sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { TenantsCreateCommand } from '../../cli/commands/tenants/create.js';
import { TenantsLsCommand } from '../../cli/commands/tenants/ls.js';
import { TenantsRmCommand } from '../../cli/commands/tenants/rm.js';
import { TenantsSetRegionCommand } from '../../cli/commands/tenants/set-region.js';
import { TenantsSetStatusCommand } from '../../cli/commands/tenants/set-status.js';

export const systemCommands: CommandClass[] = [
  TenantsCreateCommand,
  TenantsLsCommand,
  TenantsRmCommand,
  TenantsSetRegionCommand,
  TenantsSetStatusCommand,
];
