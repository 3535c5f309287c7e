/**
 * The `svc observability …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { ObservabilityAttestationCommand } from '../../cli/commands/observability/attestation.js';
import { ObservabilityIngestionHealthCommand } from '../../cli/commands/observability/ingestion-health.js';
import { ObservabilityTraceCommand } from '../../cli/commands/observability/trace.js';
import { ObservabilityTracesCommand } from '../../cli/commands/observability/traces.js';

export const observabilityCommands: CommandClass[] = [
  ObservabilityAttestationCommand,
  ObservabilityIngestionHealthCommand,
  ObservabilityTraceCommand,
  ObservabilityTracesCommand,
];
