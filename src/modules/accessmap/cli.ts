/**
 * The `svc accessmap …` commands, sorted by path: the manifest's `cli` (index.ts), spread in the CLI index
 * (src/cli/commands/index.ts). A light file: command classes only, no route or server code.
 */
import type { CommandClass } from 'clipanion';
import { AccessmapEscalationCommand } from '../../cli/commands/accessmap/attack-paths/escalation.js';
import { AccessmapExfilCommand } from '../../cli/commands/accessmap/attack-paths/exfil.js';
import { AccessmapReachabilityCommand } from '../../cli/commands/accessmap/attack-paths/reachability.js';
import { AccessmapSummaryCommand } from '../../cli/commands/accessmap/attack-paths/summary.js';
import { AccessmapDriftCommand } from '../../cli/commands/accessmap/drift.js';
import { AccessmapGraphCommand } from '../../cli/commands/accessmap/graph.js';
import { AccessmapNeighborsCommand } from '../../cli/commands/accessmap/neighbors.js';

export const accessmapCommands: CommandClass[] = [
  AccessmapEscalationCommand,
  AccessmapExfilCommand,
  AccessmapReachabilityCommand,
  AccessmapSummaryCommand,
  AccessmapDriftCommand,
  AccessmapGraphCommand,
  AccessmapNeighborsCommand,
];
