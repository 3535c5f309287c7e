/**
 * SARIF 2.1.0 Errata 01 (spec: SARIF rules 1–5): findings → one SARIF log, written as text pieces so
 * an export can stream it with flat memory: `sarifHead` (the run's tool, rules and URI bases, up to
 * the opening of `results`), one `sarifResult` per finding, then `sarifTail` (invocation with the
 * refusal notifications). Pure and synchronous, like every encoder.
 *
 * - Level from the one severity mapping: info/low → `note`, medium → `warning`, high/critical →
 *   `error`, undetermined → `none`. Any other stored severity has no level and the result is
 *   refused (rule 3), as is an empty rule id; the refusal names the corrupt spelling.
 * - `partialFingerprints.primaryLocationLineHash` is derived from the finding's natural key only,
 *   so the same finding has the same value in every export, across restarts (rule 2).
 * - A finding with an artifact URI keeps it, normalised and percent-encoded (sarif-uri.ts; relative
 *   ones resolve against `SRCROOT`); any other subject, or an artifact path that leaves the root, gets
 *   a synthetic `svc-subject:` location under `SVCSUBJECTS` (rules 1 and 4).
 * - GitHub code scanning reads `security-severity` from rule properties: the CEF column of the
 *   severity mapping (1, 3, 5, 7, 10), the highest seen for that rule in the export.
 */
import type { Severity } from './encoder.js';
import { artifactUri } from './sarif-uri.js';
import { SEVERITY } from './severity.js';

export const SARIF_VERSION = '2.1.0';
/** The Errata 01 schema the log declares. */
export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';
export const SARIF_CONTENT_TYPE = 'application/sarif+json';
/** `originalUriBaseIds` keys: the repository root (given by the consumer) and the synthetic subject space. */
export const SRCROOT = 'SRCROOT';
export const SUBJECTS_BASE = 'SVCSUBJECTS';
export const SUBJECTS_BASE_URI = 'svc-subject:/';

export type SarifLevel = 'none' | 'note' | 'warning' | 'error';
const LEVELS: Readonly<Record<Severity, SarifLevel>> = {
  info: 'note',
  low: 'note',
  medium: 'warning',
  high: 'error',
  critical: 'error',
  undetermined: 'none',
};

/** The finding fields the encoder reads (a stored finding as the findings store serves it). */
export interface SarifFinding {
  id: string;
  natural_key: string;
  rule_id: string;
  kind: string;
  severity: string;
  source: string;
  subject_kind: string;
  subject_ref: string;
  message: string;
  artifact_uri: string | null;
  region_start_line: number | null;
  region_end_line: number | null;
  tags: string[];
  status: string;
  first_seen: string;
  last_seen: string;
  occurrences: number;
}

/** One rule of the run's driver. */
export interface SarifRule {
  id: string;
  /** highest severity among the rule's exported findings */
  severity: string;
  help?: string;
  description?: string;
}

export interface SarifRunInfo {
  toolName: string;
  toolVersion: string;
  informationUri: string;
  rules: readonly SarifRule[];
  /** run-level properties (tenant, filters, cap) */
  properties: Record<string, unknown>;
}

/** The level of a stored severity, or undefined when it is outside the mapping. */
export function sarifLevel(severity: string): SarifLevel | undefined {
  return Object.prototype.hasOwnProperty.call(LEVELS, severity) ? LEVELS[severity as Severity] : undefined;
}

/** `security-severity` as GitHub reads it: the CEF number of the mapping, as a decimal string; undefined for undetermined or unknown. */
export function securitySeverity(severity: string): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(SEVERITY, severity) || severity === 'undetermined') return undefined;
  return SEVERITY[severity as Severity].cef.toFixed(1);
}

/** Stable per finding: 16 hex digits of its natural key and the occurrence index GitHub's format carries. */
export function primaryLocationLineHash(naturalKey: string): string {
  return `${naturalKey.slice(0, 16)}:1`;
}

/** Why a finding cannot become a result, or undefined when it can. */
export function refusalOf(f: Pick<SarifFinding, 'rule_id' | 'severity'>): string | undefined {
  if (f.rule_id.trim() === '') return 'empty rule id';
  if (sarifLevel(f.severity) === undefined) return `severity ${JSON.stringify(f.severity.slice(0, 64))} maps to no SARIF level`;
  return undefined;
}

/** The physical location of a finding: its artifact (relative to SRCROOT, or absolute) or a synthetic subject URI. */
export function locationOf(f: SarifFinding): Record<string, unknown> {
  const artifact = f.artifact_uri !== null && f.artifact_uri !== '' ? artifactUri(f.artifact_uri) : undefined;
  if (artifact !== undefined && 'uri' in artifact) {
    const artifactLocation: Record<string, unknown> = artifact.relative ? { uri: artifact.uri, uriBaseId: SRCROOT } : { uri: artifact.uri };
    const physical: Record<string, unknown> = { artifactLocation };
    if (f.region_start_line !== null)
      physical['region'] = { startLine: f.region_start_line, ...(f.region_end_line !== null ? { endLine: f.region_end_line } : {}) };
    return { physicalLocation: physical };
  }
  const uri = `${encodeURIComponent(f.subject_kind)}/${encodeURIComponent(f.subject_ref)}`;
  return {
    physicalLocation: { artifactLocation: { uri, uriBaseId: SUBJECTS_BASE } },
    logicalLocations: [{ name: f.subject_ref, kind: 'object', fullyQualifiedName: `${f.subject_kind}/${f.subject_ref}` }],
  };
}

/** The SARIF result object of a finding, or a refusal reason (never both). */
export function sarifResultObject(f: SarifFinding): { result: Record<string, unknown> } | { refused: string } {
  const refused = refusalOf(f);
  if (refused !== undefined) return { refused };
  const result: Record<string, unknown> = {
    ruleId: f.rule_id,
    level: sarifLevel(f.severity),
    kind: 'fail',
    message: { text: f.message === '' ? `${f.rule_id} on ${f.subject_kind} ${f.subject_ref}` : f.message },
    locations: [locationOf(f)],
    partialFingerprints: { primaryLocationLineHash: primaryLocationLineHash(f.natural_key) },
    guid: f.id,
    properties: {
      'svc.finding_id': f.id,
      'svc.kind': f.kind,
      'svc.source': f.source,
      'svc.severity': f.severity,
      'svc.status': f.status,
      'svc.subject': `${f.subject_kind}/${f.subject_ref}`,
      'svc.first_seen': f.first_seen,
      'svc.last_seen': f.last_seen,
      'svc.occurrences': f.occurrences,
      ...(f.tags.length > 0 ? { tags: f.tags } : {}),
      ...droppedArtifact(f),
    },
  };
  // Triage carries over: a suppressed or resolved finding is still exported, marked as such.
  if (f.status === 'suppressed') result['suppressions'] = [{ kind: 'external', status: 'accepted' }];
  if (f.status === 'resolved') result['baselineState'] = 'absent';
  return { result };
}

/** A reported artifact that became no location (it leaves the root, or names no file): its text and why, as properties. */
function droppedArtifact(f: SarifFinding): Record<string, string> {
  if (f.artifact_uri === null || f.artifact_uri === '') return {};
  const a = artifactUri(f.artifact_uri);
  return 'dropped' in a ? { 'svc.artifact_uri': f.artifact_uri, 'svc.artifact_uri_dropped': a.dropped } : {};
}

/** One result as JSON text, or the refusal. */
export function sarifResult(f: SarifFinding): { json: string } | { refused: string } {
  const r = sarifResultObject(f);
  return 'refused' in r ? r : { json: JSON.stringify(r.result) };
}

function ruleObject(r: SarifRule): Record<string, unknown> {
  const level = sarifLevel(r.severity) ?? 'warning';
  const sec = securitySeverity(r.severity);
  const text = r.description ?? `Findings reported under rule ${r.id}.`;
  return {
    id: r.id,
    shortDescription: { text: text.length > 200 ? `${text.slice(0, 197)}...` : text },
    fullDescription: { text },
    help: { text: r.help ?? `${text} Triage it with \`svc findings triage <id> --status acknowledged|resolved|suppressed --note …\`.` },
    defaultConfiguration: { level },
    properties: { ...(sec !== undefined ? { 'security-severity': sec } : {}), tags: ['security'] },
  };
}

/** Everything before the first result: the log, the run's tool with its rules, the URI bases, and `"results":[`. */
export function sarifHead(run: SarifRunInfo): string {
  const tool = {
    driver: {
      name: run.toolName,
      version: run.toolVersion,
      semanticVersion: semver(run.toolVersion),
      informationUri: run.informationUri,
      rules: run.rules.map(ruleObject),
    },
  };
  const bases = {
    [SRCROOT]: {
      description: {
        text:
          'The root of the repository a finding with a relative artifact URI was reported against; supplied by the consumer (e.g. the ' +
          'checkout of a code-scanning upload).',
      },
    },
    [SUBJECTS_BASE]: {
      uri: SUBJECTS_BASE_URI,
      description: { text: 'Synthetic locations of findings whose subject is not a committed file: <subject kind>/<subject ref>.' },
    },
  };
  const head = JSON.stringify({
    $schema: SARIF_SCHEMA_URI,
    version: SARIF_VERSION,
    runs: [{ tool, originalUriBaseIds: bases, properties: run.properties, results: [] }],
  });
  // Cut the closing `]}]}` of the empty results array so results can be appended.
  return head.slice(0, head.length - ']}]}'.length);
}

/** Separator before the n-th result (0-based). */
export function sarifSeparator(n: number): string {
  return n === 0 ? '' : ',';
}

/** Everything after the last result: the invocation, its refusal notifications, and the closing brackets. */
export function sarifTail(o: {
  refused: ReadonlyArray<{ id: string; reason: string }>;
  refusedTotal: number;
  truncated: boolean;
  emitted: number;
}): string {
  const notifications = o.refused.map((r) => ({
    level: 'error',
    message: { text: `finding ${r.id} not emitted: ${r.reason}` },
    descriptor: { id: 'svc.refused-result' },
  }));
  if (o.refusedTotal > o.refused.length)
    notifications.push({
      level: 'error',
      message: { text: `${o.refusedTotal - o.refused.length} more findings not emitted for the same reasons` },
      descriptor: { id: 'svc.refused-result' },
    });
  if (o.truncated)
    notifications.push({
      level: 'warning',
      message: { text: `the export stopped at its cap of ${o.emitted} results; narrow the filters to see the rest` },
      descriptor: { id: 'svc.truncated' },
    });
  const invocation = {
    executionSuccessful: true,
    toolExecutionNotifications: notifications,
    properties: { 'svc.emitted': o.emitted, 'svc.refused': o.refusedTotal, 'svc.truncated': o.truncated },
  };
  return `],"invocations":[${JSON.stringify(invocation)}]}]}`;
}

/** `dev` and other non-semver versions become `0.0.0-<version>`, as `semanticVersion` requires semver. */
function semver(v: string): string {
  return /^\d+\.\d+\.\d+/.test(v) ? v : `0.0.0-${v.replace(/[^0-9A-Za-z-]/g, '-') || 'dev'}`;
}
