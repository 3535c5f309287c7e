/** Every route of the agents/workspaces/search/accessmap area, registered with one line in src/routes.ts. */
import type { AnyRoute } from '../../contract/route.js';
import { accessEdgeRoutes } from '../../core/access-edges/routes.js';
import { agentRoutes } from '../../core/agents/routes.js';
import { searchRoutes } from '../../core/search/routes.js';
import { workspaceRoutes } from '../../core/workspaces/routes.js';
import { accessmapRoutes } from './routes.js';

/** Core routes (agents, access edges, workspaces, search) then the beta module routes. */
export const accessmapAreaRoutes: AnyRoute[] = [
  ...agentRoutes,
  ...accessEdgeRoutes,
  ...workspaceRoutes,
  ...searchRoutes,
  ...accessmapRoutes,
];
