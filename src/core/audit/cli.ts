/**
 * The `svc audit checkpoint` and `svc audit verify` commands, sorted by path: the manifest's `cli` (index.ts), spread in the
 * CLI index (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AuditCheckpointCommand } from '../../cli/commands/audit/checkpoint.js';
import { AuditVerifyCommand } from '../../cli/commands/audit/verify.js';

export const auditCommands: CommandClass[] = [AuditCheckpointCommand, AuditVerifyCommand];
