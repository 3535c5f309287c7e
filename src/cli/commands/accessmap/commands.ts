/** The `svc accessmap …` and `svc agent …` commands, sorted by path; listed in ../index.ts with one spread. */
import type { CommandClass } from 'clipanion';
import { AgentCreateCommand } from '../agent/create.js';
import { AgentGetCommand } from '../agent/get.js';
import { AgentLsCommand } from '../agent/ls.js';
import { AgentRmCommand } from '../agent/rm.js';
import { AgentUpdateCommand } from '../agent/update.js';
import { AccessmapEscalationCommand } from './attack-paths/escalation.js';
import { AccessmapExfilCommand } from './attack-paths/exfil.js';
import { AccessmapReachabilityCommand } from './attack-paths/reachability.js';
import { AccessmapSummaryCommand } from './attack-paths/summary.js';
import { AccessmapDriftCommand } from './drift.js';
import { AccessmapGraphCommand } from './graph.js';
import { AccessmapNeighborsCommand } from './neighbors.js';

export const accessmapCommands: CommandClass[] = [
  AccessmapEscalationCommand,
  AccessmapExfilCommand,
  AccessmapReachabilityCommand,
  AccessmapSummaryCommand,
  AccessmapDriftCommand,
  AccessmapGraphCommand,
  AccessmapNeighborsCommand,
  AgentCreateCommand,
  AgentGetCommand,
  AgentLsCommand,
  AgentRmCommand,
  AgentUpdateCommand,
];
