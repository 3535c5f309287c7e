/**
 * The SARIF encoder (spec: SARIF rules 1–4): a log assembled from its pieces is valid against the
 * official SARIF 2.1.0 schema (ajv 2020-12) and passes `sarif-multitool validate` without error;
 * levels follow the one severity mapping; a result with an empty rule id or an out-of-mapping
 * severity is refused; fingerprints depend on the natural key only; locations are the artifact's or
 * a synthetic subject URI resolved against a declared base.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  primaryLocationLineHash,
  sarifHead,
  sarifLevel,
  sarifResult,
  sarifResultObject,
  sarifSeparator,
  sarifTail,
  SUBJECTS_BASE,
  SRCROOT,
  type SarifFinding,
} from '../../src/encoders/sarif.js';
import { tempDir } from '../helpers/server.js';
import { multitoolErrors, multitoolSkip, sarifSchemaErrors } from '../helpers/sarif.js';

const KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

function finding(over: Partial<SarifFinding> = {}): SarifFinding {
  return {
    id: '01890a5d-ac96-774b-bcce-b302099a8057',
    natural_key: KEY,
    rule_id: 'secret-in-prompt',
    kind: 'collector',
    severity: 'high',
    source: 'collector',
    subject_kind: 'subject',
    subject_ref: 'build-bot',
    message: 'an API key was pasted into a prompt',
    artifact_uri: null,
    region_start_line: null,
    region_end_line: null,
    tags: ['secrets'],
    status: 'open',
    first_seen: '2026-06-02T10:00:00.000000000Z',
    last_seen: '2026-06-02T10:00:00.000000000Z',
    occurrences: 1,
    ...over,
  };
}

/** A whole log from findings, as the export assembles it. */
function log(findings: SarifFinding[]): { text: string; refused: string[] } {
  let text = sarifHead({
    toolName: 'svc',
    toolVersion: 'dev',
    informationUri: 'https://example.test/docs/findings.md',
    rules: [
      { id: 'secret-in-prompt', severity: 'high' },
      { id: 'path/with spaces', severity: 'low' },
    ],
    properties: { 'svc.tenant': 't' },
  });
  const refused: Array<{ id: string; reason: string }> = [];
  let n = 0;
  for (const f of findings) {
    const r = sarifResult(f);
    if ('refused' in r) refused.push({ id: f.id, reason: r.refused });
    else text += sarifSeparator(n++) + r.json;
  }
  text += sarifTail({ refused, refusedTotal: refused.length, truncated: false, emitted: n });
  return { text, refused: refused.map((r) => r.reason) };
}

describe('SARIF encoder', () => {
  it('levels come from the one severity mapping; anything else has none', () => {
    assert.deepEqual(['info', 'low', 'medium', 'high', 'critical', 'undetermined'].map(sarifLevel), [
      'note',
      'note',
      'warning',
      'error',
      'error',
      'none',
    ]);
    for (const bad of ['', 'HIGH', 'severe', 'toString', '__proto__']) assert.equal(sarifLevel(bad), undefined, bad);
  });

  it('refuses an empty rule id or a severity outside the mapping, naming the corrupt spelling', () => {
    assert.deepEqual(sarifResult(finding({ rule_id: '' })), { refused: 'empty rule id' });
    assert.deepEqual(sarifResult(finding({ rule_id: '   ' })), { refused: 'empty rule id' });
    assert.deepEqual(sarifResult(finding({ severity: 'severe' })), { refused: 'severity "severe" maps to no SARIF level' });
  });

  it('the fingerprint derives from the natural key only: same key, same value; another key, another', () => {
    const a = sarifResultObject(finding()) as { result: { partialFingerprints: { primaryLocationLineHash: string } } };
    const b = sarifResultObject(
      finding({
        id: '01890a5d-ac96-774b-bcce-b302099a8099',
        message: 'other text',
        last_seen: '2027-01-01T00:00:00.000000000Z',
        occurrences: 9,
      }),
    ) as typeof a;
    assert.equal(a.result.partialFingerprints.primaryLocationLineHash, b.result.partialFingerprints.primaryLocationLineHash);
    assert.equal(a.result.partialFingerprints.primaryLocationLineHash, `${KEY.slice(0, 16)}:1`);
    assert.notEqual(primaryLocationLineHash('ff'.repeat(32)), primaryLocationLineHash(KEY));
  });

  it('a subject that is not a file gets a synthetic URI under a declared base; an artifact URI is kept', () => {
    const synthetic = sarifResultObject(finding({ subject_ref: 'bot/1 ü' })) as {
      result: { locations: Array<{ physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string } } }> };
    };
    assert.deepEqual(synthetic.result.locations[0]?.physicalLocation.artifactLocation, {
      uri: 'subject/bot%2F1%20%C3%BC',
      uriBaseId: SUBJECTS_BASE,
    });
    const relative = sarifResultObject(finding({ artifact_uri: 'src/app.ts', region_start_line: 12, region_end_line: 14 })) as {
      result: { locations: Array<{ physicalLocation: Record<string, unknown> }> };
    };
    assert.deepEqual(relative.result.locations[0]?.physicalLocation, {
      artifactLocation: { uri: 'src/app.ts', uriBaseId: SRCROOT },
      region: { startLine: 12, endLine: 14 },
    });
    const absolute = sarifResultObject(finding({ artifact_uri: 'https://git.example.test/repo/blob/main/a.py' })) as typeof relative;
    assert.deepEqual(absolute.result.locations[0]?.physicalLocation, {
      artifactLocation: { uri: 'https://git.example.test/repo/blob/main/a.py' },
    });
    // What a URI reference cannot hold is percent-encoded; an escape already there stays.
    const spaced = sarifResultObject(finding({ artifact_uri: 'src/a b%20ü%.ts' })) as typeof relative;
    assert.deepEqual(spaced.result.locations[0]?.physicalLocation, {
      artifactLocation: { uri: 'src/a%20b%20%C3%BC%25.ts', uriBaseId: SRCROOT },
    });
    const head = JSON.parse(
      `${sarifHead({ toolName: 'svc', toolVersion: '1.2.3', informationUri: 'https://example.test', rules: [], properties: {} })}]}]}`,
    ) as { runs: Array<{ originalUriBaseIds: Record<string, { uri?: string }> }> };
    assert.equal(head.runs[0]?.originalUriBaseIds[SUBJECTS_BASE]?.uri, 'svc-subject:/');
    assert.ok(head.runs[0]?.originalUriBaseIds[SRCROOT]);
  });

  it('a log of every shape is valid against the official schema (ajv 2020-12) and the refused result never appears', () => {
    const { text, refused } = log([
      finding(),
      finding({
        id: '01890a5d-ac96-774b-bcce-b302099a8001',
        rule_id: 'path/with spaces',
        severity: 'low',
        artifact_uri: 'src/a b.ts',
        region_start_line: 3,
        region_end_line: null,
        status: 'suppressed',
        tags: [],
      }),
      finding({ id: '01890a5d-ac96-774b-bcce-b302099a8002', severity: 'undetermined', status: 'resolved', message: '' }),
      finding({ id: '01890a5d-ac96-774b-bcce-b302099a8003', rule_id: '' }),
      finding({ id: '01890a5d-ac96-774b-bcce-b302099a8004', severity: 'bogus' }),
    ]);
    const doc = JSON.parse(text) as {
      version: string;
      runs: Array<{ results: Array<{ guid: string }>; invocations: Array<{ toolExecutionNotifications: unknown[] }> }>;
    };
    assert.deepEqual(sarifSchemaErrors(doc), []);
    assert.equal(doc.version, '2.1.0');
    assert.deepEqual(doc.runs[0]?.results.map((r) => r.guid.slice(-4)), ['8057', '8001', '8002']);
    assert.deepEqual(refused, ['empty rule id', 'severity "bogus" maps to no SARIF level']);
    assert.equal(doc.runs[0]?.invocations[0]?.toolExecutionNotifications.length, 2);
    // The schema check can fail: a level outside the enumeration is caught.
    const broken = JSON.parse(text) as { runs: Array<{ results: Array<{ level: string }> }> };
    (broken.runs[0]?.results[0] as { level: string }).level = 'fatal';
    assert.notDeepEqual(sarifSchemaErrors(broken), []);
  });

  it('sarif-multitool validate reports no error-level result on the same log', { skip: multitoolSkip() }, () => {
    const file = path.join(tempDir('svc-sarif-'), 'findings.sarif');
    writeFileSync(
      file,
      log([
        finding(),
        finding({ id: '01890a5d-ac96-774b-bcce-b302099a8001', artifact_uri: 'src/app.ts', region_start_line: 1, region_end_line: null }),
      ]).text,
    );
    assert.deepEqual(multitoolErrors(file), []);
    // And it does report errors: a log with a result lacking its message fails.
    const bad = path.join(tempDir('svc-sarif-'), 'bad.sarif');
    writeFileSync(
      bad,
      JSON.stringify({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x', version: '1' } }, results: [{ ruleId: 'r' }] }] }),
    );
    assert.notDeepEqual(multitoolErrors(bad), []);
  });
});
