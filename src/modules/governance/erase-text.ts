/**
 * Erasure of a person's identifiers from approvals and kill switches (docs/compliance.md): the
 * reasons and decision comments. An approval's params stay: its plan hash binds them (they hold
 * ids and digests, never aliases). Policy revisions are signed and immutable: the receipt names them.
 */
import { redactionHook } from '../../contract/erase-text.js';

export const governanceEraseText = redactionHook('governance.redact-personal-text', (_p, tenant) => [
  { table: 'gov_approvals', key: ['id'], columns: ['reason'], updatedAt: 'updated_at', where: { tenant_id: tenant } },
  { table: 'gov_approval_decisions', key: ['id'], columns: ['reason'], where: { tenant_id: tenant } },
  { table: 'gov_kill_switches', key: ['tenant_id', 'scope'], columns: ['reason'], where: { tenant_id: tenant } },
]);
