/** The identity and tenancy routes (setup, auth, tokens, users, members and orgs) for harnesses that serve only those. */
import type { AnyRoute } from '../../src/contract/route.js';
import { setupManifest } from '../../src/core/setup/index.js';
import { authManifest } from '../../src/core/auth/index.js';
import { tokensManifest } from '../../src/core/tokens/index.js';
import { usersManifest } from '../../src/core/users/index.js';
import { systemManifest } from '../../src/core/system/index.js';

export const identityRoutes: AnyRoute[] = [setupManifest, authManifest, tokensManifest, usersManifest, systemManifest].flatMap(
  (m) => m.routes,
);
