/**
 * The access map module: its manifest (routes, tables, hooks) and the service other modules may
 * call. Other modules import from this file only, never from the module's other files.
 */
import type { ModuleManifest } from '../../contract/manifest.js';
import { accessmapCommands } from './cli.js';
import { forgetAgentEdges } from './agent-forget.js';
import { accessmapRoutes } from './routes.js';
import { accessmapStorage } from './storage.js';
import { accessmapEraseText } from './erase-text.js';

export const accessmapManifest: ModuleManifest = {
  name: 'accessmap',
  routes: accessmapRoutes,
  storage: accessmapStorage,
  cli: accessmapCommands,
  hooks: [forgetAgentEdges, accessmapEraseText],
};

// The service surface: reads of the graph other modules build on (findings' detectors, the console).
export { listDrift, listEdges, type DriftItem, type EdgeFilter, type Page } from './edge-query.js';
export { escalation, exfil, reachability, DEFAULT_BOUNDS, type AttackPath, type SearchBounds } from './attack-paths.js';
export { attackPathSummary } from './summary.js';
export { withFoldedGraph } from './graph-source.js';
export type { AccessEdge, GraphNode } from './model.js';
