/**
 * Erasure of a person's identifiers in API key names (docs/compliance.md), revoked keys included:
 * the erased user's own keys, and the keys bound to the erasing tenant. `api_tokens` is global, so
 * the rows are named here, never the whole table.
 */
import { redactionHook } from '../../contract/erase-text.js';
import type { RedactSpec } from '../../store/redact.js';

export const tokensEraseText = redactionHook('tokens.redact-personal-text', (p, tenant) => {
  const specs: RedactSpec[] = [{ table: 'api_tokens', key: ['id'], columns: ['name'], where: { org_id: tenant } }];
  if (p.user_id !== null) specs.unshift({ table: 'api_tokens', key: ['id'], columns: ['name'], where: { user_id: p.user_id } });
  return specs;
});
