/** The security module's event types, the events of a findings change, and the ledger record of a system run. */
import { Type } from 'typebox';
import type { EventInput, EventTypeDecl } from '../../events/event-types.js';
import type { Services } from '../../serve/services.js';
import type { Finding } from './model.js';

const FindingRef = Type.Object(
  { id: Type.String(), rule_id: Type.String(), severity: Type.String(), status: Type.String() },
  { additionalProperties: true },
);

export const securityEvents: EventTypeDecl[] = [
  {
    type: 'finding.reported',
    source: '/svc/security',
    permission: 'security:finding:read',
    stability: 'beta',
    schema: FindingRef,
    description:
      'A finding was reported for the first time, or reported again after it was resolved (data: id, rule_id, severity, status, source, ' +
      'subject).',
  },
  {
    type: 'finding.updated',
    source: '/svc/security',
    permission: 'security:finding:read',
    stability: 'beta',
    schema: FindingRef,
    description:
      'A finding changed status: triaged, or resolved because its detector no longer sees it (data: id, rule_id, severity, status, ' +
      'previous_status, by).',
  },
];

const data = (f: Finding): Record<string, unknown> => ({
  id: f.id,
  rule_id: f.rule_id,
  severity: f.severity,
  status: f.status,
  source: f.source,
  subject: `${f.subject_kind}/${f.subject_ref}`,
});

/**
 * `finding.reported` for each new or reopened finding and `finding.updated` for each status change:
 * emitted with the transaction that changed them (the durable log), announced after its commit.
 */
export function findingEvents(
  tenant: string,
  reported: readonly Finding[],
  updated: ReadonlyArray<{ finding: Finding; previous: string }> = [],
): EventInput[] {
  return [
    ...reported.map((f) => ({ type: 'finding.reported', tenant, subject: `finding/${f.id}`, data: data(f) })),
    ...updated.map(({ finding, previous }) => ({
      type: 'finding.updated',
      tenant,
      subject: `finding/${finding.id}`,
      data: { ...data(finding), previous_status: previous, by: finding.status_by },
    })),
  ];
}

/** Appends the ledger record of a change the system made (collector folding, a detector run) on its own. */
export async function auditSystem(
  services: Pick<Services, 'audit'>,
  tenant: string,
  action: string,
  meta: Record<string, unknown>,
): Promise<void> {
  await services.audit.append(tenant, {
    actor: 'system',
    actor_kind: 'system',
    action,
    target_kind: 'security_findings',
    target_id: '',
    meta,
  });
}
