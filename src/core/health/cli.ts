/**
 * The `svc health` and `svc status` commands (/healthz, /readyz, /v1/server-info), sorted by path: the manifest's `cli`
 * (index.ts), spread in the CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { HealthCommand } from '../../cli/commands/health.js';
import { StatusCommand } from '../../cli/commands/status.js';

export const healthCommands: CommandClass[] = [HealthCommand, StatusCommand];
