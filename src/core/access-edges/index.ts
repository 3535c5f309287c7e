/** The stable read of the access map's edges (served through `services.accessEdges`, wired by the composition root). */
import type { ModuleManifest } from '../../contract/manifest.js';
import { accessEdgeRoutes } from './routes.js';

export const accessEdgesManifest: ModuleManifest = { name: 'access-edges', routes: accessEdgeRoutes };
