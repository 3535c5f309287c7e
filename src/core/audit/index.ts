/** The audit ledger: records, verification, checkpoints, and its tables. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { auditCommands } from './cli.js';
import { auditRoutes } from './routes.js';
import { auditStorage } from './storage.js';

export const auditManifest: ModuleManifest = { name: 'audit', routes: auditRoutes, storage: auditStorage, cli: auditCommands };
