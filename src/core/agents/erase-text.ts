/** Erasure of a person's identifiers typed into agents (docs/compliance.md): name, labels, external id. */
import { redactionHook } from '../../contract/erase-text.js';

export const agentsEraseText = redactionHook('agents.redact-personal-text', (_p, tenant) => [
  {
    table: 'agents',
    key: ['id'],
    columns: ['name', 'labels', 'external_id'],
    // external_id is unique per tenant: its replacement keeps the agent id, so two stay distinct
    unique: ['external_id'],
    version: 'version',
    updatedAt: 'updated_at',
    where: { tenant_id: tenant },
  },
]);
