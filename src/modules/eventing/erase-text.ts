/**
 * Erasure of a person's identifiers from the event log (docs/compliance.md): the data of logged
 * events (`agent.created` carries the agent's name and labels, `token.issued` the key's name),
 * subscription names, test payloads and delivery errors. Deliveries already made, and the NATS
 * stream's copies (kept up to an hour), are out of reach: the receipt says so.
 */
import { redactionHook } from '../../contract/erase-text.js';

export const eventingEraseText = redactionHook('eventing.redact-personal-text', (_p, tenant) => [
  { table: 'events', key: ['tenant_id', 'seq'], columns: ['data'], where: { tenant_id: tenant } },
  {
    table: 'event_subscriptions',
    key: ['id'],
    columns: ['name'],
    unique: ['name'],
    version: 'version',
    updatedAt: 'updated_at',
    where: { tenant_id: tenant },
  },
  { table: 'event_deliveries', key: ['id'], columns: ['payload', 'last_error'], updatedAt: 'updated_at', where: { tenant_id: tenant } },
]);
