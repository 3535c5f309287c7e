/**
 * The console API's commands (`svc config effective`, `svc secrets …`, `svc sso …`, `svc support …`), sorted by path: the
 * manifest's `cli` (index.ts), spread in the CLI index (src/cli/commands/index.ts). A light file: command classes only, no
 * route or server code.
 */
import type { CommandClass } from 'clipanion';
import { ConfigEffectiveCommand } from '../../cli/commands/config/effective.js';
import { SecretsLsCommand } from '../../cli/commands/secrets/ls.js';
import { SecretsRmCommand } from '../../cli/commands/secrets/rm.js';
import { SecretsSetCommand } from '../../cli/commands/secrets/set.js';
import { SsoGetCommand, SsoRmCommand, SsoSetCommand, SsoTestCommand } from '../../cli/commands/sso/commands.js';
import { SupportBundleCommand } from '../../cli/commands/support/bundle.js';
import { SupportLicenseCommand } from '../../cli/commands/support/license.js';
import { SupportStatusCommand } from '../../cli/commands/support/status.js';
import { SupportUpdateCheckCommand } from '../../cli/commands/support/update-check.js';

export const consoleCommands: CommandClass[] = [
  ConfigEffectiveCommand,
  SecretsLsCommand,
  SecretsRmCommand,
  SecretsSetCommand,
  SsoGetCommand,
  SsoRmCommand,
  SsoSetCommand,
  SsoTestCommand,
  SupportBundleCommand,
  SupportLicenseCommand,
  SupportStatusCommand,
  SupportUpdateCheckCommand,
];
