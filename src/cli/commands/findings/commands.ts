/** The `svc findings …`, `svc security …` and `svc observability …` commands, sorted by path; listed in ../index.ts with one spread. */
import type { CommandClass } from 'clipanion';
import { ObservabilityAttestationCommand } from '../observability/attestation.js';
import { ObservabilityIngestionHealthCommand } from '../observability/ingestion-health.js';
import { ObservabilityTraceCommand } from '../observability/trace.js';
import { ObservabilityTracesCommand } from '../observability/traces.js';
import { SecurityEvaluateCommand } from '../security/evaluate.js';
import { FindingsEvidenceCommand } from './evidence.js';
import { FindingsExportCommand } from './export.js';
import { FindingsGetCommand } from './get.js';
import { FindingsLsCommand } from './ls.js';
import { FindingsTriageCommand } from './triage.js';

export const findingsCommands: CommandClass[] = [
  FindingsEvidenceCommand,
  FindingsExportCommand,
  FindingsGetCommand,
  FindingsLsCommand,
  FindingsTriageCommand,
  ObservabilityAttestationCommand,
  ObservabilityIngestionHealthCommand,
  ObservabilityTraceCommand,
  ObservabilityTracesCommand,
  SecurityEvaluateCommand,
];
