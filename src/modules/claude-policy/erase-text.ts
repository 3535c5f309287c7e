/**
 * Erasure of a person's identifiers from check-in reasons and managed config names (docs/compliance.md); revisions are
 * immutable: the receipt names them.
 */
import { redactionHook } from '../../contract/erase-text.js';

export const claudePolicyEraseText = redactionHook('claude-policy.redact-personal-text', (_p, tenant) => [
  { table: 'cp_checkins', key: ['tenant_id', 'surface', 'host'], columns: ['reason'], where: { tenant_id: tenant } },
  { table: 'cap_configs', key: ['id'], columns: ['name'], unique: ['name'], updatedAt: 'updated_at', where: { tenant_id: tenant } },
]);
