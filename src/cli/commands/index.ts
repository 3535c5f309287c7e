import type { CommandClass } from 'clipanion';
import { HealthCommand } from './health.js';
import { OpenapiCommand } from './openapi.js';
import { StatusCommand } from './status.js';
import { VersionCommand } from './version.js';
// `svc serve` is written by the serve area (src/serve); its class lives at the command path.
import { ServeCommand } from './serve.js';

/**
 * Every `svc` command, listed explicitly (STYLE rule 6: the file path is the command path, e.g.
 * `commands/audit/verify.ts` is `svc audit verify`). Add new commands here, sorted by path.
 */
export const commands: CommandClass[] = [HealthCommand, OpenapiCommand, ServeCommand, StatusCommand, VersionCommand];
