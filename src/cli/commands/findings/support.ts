/** Shared pieces of the `svc findings` commands: the finding shape, its table and fields, the filter flags. */
import { Option } from 'clipanion';
import { fields, table } from '../auth/support.js';

export type FindingView = {
  id: string;
  rule_id: string;
  kind: string;
  severity: string;
  source: string;
  subject_kind: string;
  subject_ref: string;
  message: string;
  artifact_uri: string | null;
  region: { start_line: number; end_line?: number } | null;
  tags: string[];
  first_seen: string;
  last_seen: string;
  occurrences: number;
  status: string;
  status_by: string;
  status_note: string;
  fingerprint: string;
  version: number;
};

/** Text rendering of finding lists. */
export function findingTable(items: FindingView[]): string {
  return table(items, [
    ['id', (f) => f.id],
    ['severity', (f) => f.severity],
    ['status', (f) => f.status],
    ['rule', (f) => f.rule_id],
    ['subject', (f) => `${f.subject_kind}/${f.subject_ref}`],
    ['seen', (f) => f.occurrences],
    ['last seen', (f) => f.last_seen],
  ]);
}

/** Text rendering of one finding. */
export function findingFields(f: FindingView): string {
  return fields({ ...f, region: f.region ? `${f.region.start_line}${f.region.end_line ? `-${f.region.end_line}` : ''}` : null });
}

/** The filter flags the list and the export share (the routes take the same names). */
export function filterOptions() {
  return {
    status: Option.String('--status', { description: 'Only findings with this status: open, acknowledged, resolved, suppressed' }),
    severity: Option.String('--severity', {
      description: 'Only findings of this severity: info, low, medium, high, critical, undetermined',
    }),
    source: Option.String('--source', { description: 'Only findings from this source: collector, integration, detector' }),
    kind: Option.String('--kind', { description: 'Only findings of this kind (e.g. drift, attack_path, collector)' }),
    rule: Option.String('--rule', { description: 'Only findings of this rule id' }),
    subjectKind: Option.String('--subject-kind', { description: 'Only findings about subjects of this kind' }),
    subjectRef: Option.String('--subject-ref', { description: 'Only findings about this subject' }),
  };
}

/** The query of the filter flags. */
export function filterQuery(f: {
  status?: string | undefined;
  severity?: string | undefined;
  source?: string | undefined;
  kind?: string | undefined;
  rule?: string | undefined;
  subjectKind?: string | undefined;
  subjectRef?: string | undefined;
}): Record<string, string | undefined> {
  return {
    status: f.status,
    severity: f.severity,
    source: f.source,
    kind: f.kind,
    rule_id: f.rule,
    subject_kind: f.subjectKind,
    subject_ref: f.subjectRef,
  };
}
