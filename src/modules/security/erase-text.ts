/** Erasure of a person's identifiers from findings (docs/compliance.md): message, tags, evidence, notes, subject and artifact. */
import { redactionHook } from '../../contract/erase-text.js';

export const securityEraseText = redactionHook('security.redact-personal-text', (_p, tenant) => [
  {
    table: 'security_findings',
    key: ['id'],
    columns: ['message', 'tags', 'evidence', 'status_note', 'subject_ref', 'artifact_uri'],
    version: 'version',
    updatedAt: 'updated_at',
    where: { tenant_id: tenant },
  },
]);
