/** The audit ledger's streamed export. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { auditExportRoutes } from './routes.js';

export const auditExportManifest: ModuleManifest = { name: 'audit-export', routes: auditExportRoutes };
