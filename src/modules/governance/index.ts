/** The governance module: approvals under dual control, signed policy revisions, the hook decision endpoint. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { governanceCommands } from './cli.js';
import { approvalRoutes } from './approval-routes.js';
import { governanceEvents } from './events.js';
import { pdpRoutes } from './pdp-routes.js';
import { pepRoutes } from './pep-routes.js';
import { governanceStorage } from './storage.js';
import { governanceEraseText } from './erase-text.js';
import { AGENT_CHANGES, startKillSwitchCache } from './kill-switch.js';

export const governanceManifest: ModuleManifest = {
  name: 'governance',
  hooks: [governanceEraseText],
  routes: [...approvalRoutes, ...pepRoutes, ...pdpRoutes],
  storage: governanceStorage,
  cli: governanceCommands,
  events: governanceEvents,
  // A stopped agent's rename or delete refreshes the kill-switch cache (kill-switch.ts).
  consumes: AGENT_CHANGES,
  start: startKillSwitchCache,
};

/** What other modules may use: the approval gate (dual control) and the 202 body. */
export { gateOnApproval, getApproval, listDecisions, pendingApprovalBody, type Approval, type Plan } from './approval-service.js';
/** Signed revisions (any surface; the claude-policy module stores its JSON surfaces here) and the policy-signing key. */
export { getRevision, listRevisions, publishRevision, type PolicyRevision } from './policy-store.js';
export { policySigner, sha256Hex, type PolicySigner } from './policy-signing.js';
