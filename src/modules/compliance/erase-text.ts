/**
 * Erasure of a person's identifiers from the compliance module's own text (docs/compliance.md):
 * the matter, reason, title and on-behalf-of of legal holds, and the case reference and reason of
 * erasure requests (this one included: its subject id and alias digests are what the receipt keeps).
 */
import { redactionHook } from '../../contract/erase-text.js';

export const complianceEraseText = redactionHook('compliance.redact-personal-text', (_p, tenant) => [
  {
    table: 'cmp_holds',
    key: ['id'],
    columns: ['matter', 'reason', 'title', 'on_behalf_of'],
    updatedAt: 'updated_at',
    where: { tenant_id: tenant },
  },
  { table: 'cmp_erasures', key: ['id'], columns: ['case_ref', 'reason'], updatedAt: 'updated_at', where: { tenant_id: tenant } },
]);
