/** Erasure of a person's identifiers in the names of the erased user's security keys (docs/compliance.md). */
import { redactionHook } from '../../contract/erase-text.js';

export const webauthnEraseText = redactionHook('webauthn.redact-personal-text', (p) =>
  p.user_id !== null ? [{ table: 'webauthn_credentials', key: ['id'], columns: ['name'], where: { user_id: p.user_id } }] : [],
);
