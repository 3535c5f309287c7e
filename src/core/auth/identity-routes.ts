/** Every route of the identity and tenancy area, for the one line in src/routes.ts. */
import type { AnyRoute } from '../../contract/route.js';
import { setupRoutes } from '../setup/routes.js';
import { authRoutes } from './routes.js';
import { tokenRoutes } from '../tokens/routes.js';
import { userRoutes } from '../users/routes.js';
import { memberRoutes } from '../system/member-routes.js';
import { orgRoutes } from '../system/org-routes.js';

export const identityRoutes: AnyRoute[] = [...setupRoutes, ...authRoutes, ...tokenRoutes, ...userRoutes, ...memberRoutes, ...orgRoutes];
