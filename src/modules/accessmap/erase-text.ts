/** Erasure of a person's identifiers from workspaces and graph nodes (docs/compliance.md). */
import { redactionHook } from '../../contract/erase-text.js';

export const accessmapEraseText = redactionHook('accessmap.redact-personal-text', (_p, tenant) => [
  {
    table: 'workspaces',
    key: ['id'],
    columns: ['display_name', 'root_path', 'restricted_subpaths', 'mount_target'],
    updatedAt: 'updated_at',
    where: { tenant_id: tenant },
  },
  // ref is unique per tenant and kind: its replacement keeps the node id
  { table: 'access_nodes', key: ['id'], columns: ['name', 'ref'], unique: ['ref'], where: { tenant_id: tenant } },
]);
