/** The audit ledger's streamed export. */
import type { ModuleManifest } from '../../contract/manifest.js';
import { auditExportCommands } from './cli.js';
import { auditExportRoutes } from './routes.js';

export const auditExportManifest: ModuleManifest = { name: 'audit-export', routes: auditExportRoutes, cli: auditExportCommands };
