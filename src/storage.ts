/**
 * Every area that keeps tables: one storage declaration per line (src/store/module-storage.ts). Kept
 * apart from src/routes.ts because the store, the CLI and the workers open the database without
 * loading any route code; the server refuses to start when a manifest's storage is not listed here.
 */
import { StorageRegistry } from './store/module-storage.js';
import { agentsStorage } from './core/agents/storage.js';
import { authStorage } from './core/auth/storage.js';
import { auditStorage } from './core/audit/storage.js';
import { webauthnStorage } from './core/webauthn/storage.js';
import { consoleStorage } from './core/console/storage.js';
import { connectorsStorage } from './core/connectors/storage.js';
import { systemStorage } from './core/system/storage.js';
import { accessmapStorage } from './modules/accessmap/storage.js';
import { securityStorage } from './modules/security/storage.js';
import { governanceStorage } from './modules/governance/storage.js';
import { eventingStorage } from './modules/eventing/storage.js';
import { complianceStorage } from './modules/compliance/storage.js';
import { claudePolicyStorage } from './modules/claude-policy/storage.js';

/** The folded storage of the process; the stores run its migration arrays. */
export const storage = new StorageRegistry([
  agentsStorage,
  authStorage,
  auditStorage,
  webauthnStorage,
  accessmapStorage,
  securityStorage,
  governanceStorage,
  eventingStorage,
  consoleStorage,
  complianceStorage,
  connectorsStorage,
  systemStorage,
  claudePolicyStorage,
]);
