/** Every route the server serves: one line per area (ARCHITECTURE.md: a namespace is a folder that exports its routes). */
import type { AnyRoute } from './contract/route.js';
import { healthRoutes } from './core/health/routes.js';

/** The whole route table, in registration order. */
export function allRoutes(): AnyRoute[] {
  return [...healthRoutes];
}
