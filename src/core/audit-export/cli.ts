/**
 * The `svc audit export` command: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AuditExportCommand } from '../../cli/commands/audit/export.js';

export const auditExportCommands: CommandClass[] = [AuditExportCommand];
