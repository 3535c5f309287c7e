/**
 * Issue 48 item 7: artifact paths in SARIF (SARIF 2.1.0 §3.10, RFC 3986). A relative path is
 * normalised and percent-encoded per segment, so `#` and `?` stay in the file name; a path that
 * leaves the repository root gets no file location (the synthetic subject location instead, the
 * reported text in properties); absolute paths become `file:` URIs. A log holding every awkward
 * path passes the official schema and `sarif-multitool validate` with the SARIF and GitHub rules.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sarifHead, sarifResult, sarifResultObject, sarifSeparator, sarifTail, SRCROOT, SUBJECTS_BASE } from '../../src/encoders/sarif.js';
import type { SarifFinding } from '../../src/encoders/sarif.js';
import { tempDir } from '../helpers/server.js';
import { multitoolErrors, multitoolSkip, sarifSchemaErrors } from '../helpers/sarif.js';

/** Reported path → the artifactLocation it becomes (null: dropped, the subject's location instead). */
const CASES: Array<[string, { uri: string; uriBaseId?: string } | null]> = [
  ['docs/my file #1 ü.md', { uri: 'docs/my%20file%20%231%20%C3%BC.md', uriBaseId: SRCROOT }],
  ['src/what?.ts', { uri: 'src/what%3F.ts', uriBaseId: SRCROOT }],
  ['src/100%.ts', { uri: 'src/100%25.ts', uriBaseId: SRCROOT }],
  ['src/a%20b.ts', { uri: 'src/a%20b.ts', uriBaseId: SRCROOT }],
  ['src/a[1]:b.ts', { uri: 'src/a%5B1%5D%3Ab.ts', uriBaseId: SRCROOT }],
  ['ü/ä.ts', { uri: '%C3%BC/%C3%A4.ts', uriBaseId: SRCROOT }],
  ['src\\win\\a.ts', { uri: 'src/win/a.ts', uriBaseId: SRCROOT }],
  ['./src/./a.ts', { uri: 'src/a.ts', uriBaseId: SRCROOT }],
  ['src//lib/../a.ts', { uri: 'src/a.ts', uriBaseId: SRCROOT }],
  ['../outside/secret.txt', null],
  ['src/../../secret.txt', null],
  ['..\\secret.txt', null],
  ['%2e%2e/secret.txt', null],
  ['..%2Fsecret.txt', null],
  ['.', null],
  ['C:foo.ts', null],
  ['/home/dev/my file.ts', { uri: 'file:///home/dev/my%20file.ts' }],
  ['C:\\src\\a b.ts', { uri: 'file:///C:/src/a%20b.ts' }],
  ['\\\\server\\share\\a.ts', { uri: 'file://server/share/a.ts' }],
  ['file:///home/dev/a%20b.ts', { uri: 'file:///home/dev/a%20b.ts' }],
  ['file:///home/dev/a b.ts', { uri: 'file:///home/dev/a%20b.ts' }],
  ['https://git.example.test/r/blob/main/a.py#L3', { uri: 'https://git.example.test/r/blob/main/a.py#L3' }],
  ['https://git.example.test/a b#L1#x', { uri: 'https://git.example.test/a%20b#L1%23x' }],
];

function finding(i: number, artifact: string): SarifFinding {
  return {
    id: `01890a5d-ac96-774b-bcce-b302099a${String(8000 + i).padStart(4, '0')}`,
    natural_key: `${String(i).padStart(4, '0')}${'ab'.repeat(30)}`,
    rule_id: 'secret-in-file',
    kind: 'collector',
    severity: 'high',
    source: 'collector',
    subject_kind: 'repo',
    subject_ref: 'svc',
    message: 'a secret in a committed file.',
    artifact_uri: artifact,
    region_start_line: 1,
    region_end_line: 1,
    tags: [],
    status: 'open',
    first_seen: '2026-06-02T10:00:00.000000000Z',
    last_seen: '2026-06-02T10:00:00.000000000Z',
    occurrences: 1,
  };
}

type Loc = { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string } } };
type Result = { locations: Loc[]; properties: Record<string, unknown> };

describe('SARIF artifact paths', () => {
  for (const [i, [reported, expected]] of CASES.entries()) {
    it(`${JSON.stringify(reported)} → ${expected === null ? 'no file location' : expected.uri}`, () => {
      const r = (sarifResultObject(finding(i, reported)) as { result: Result }).result;
      const location = r.locations[0]?.physicalLocation.artifactLocation;
      if (expected === null) {
        assert.deepEqual(location, { uri: 'repo/svc', uriBaseId: SUBJECTS_BASE });
        assert.equal(r.properties['svc.artifact_uri'], reported);
        assert.equal(typeof r.properties['svc.artifact_uri_dropped'], 'string');
      } else {
        assert.deepEqual(location, expected);
        assert.equal(r.properties['svc.artifact_uri'], undefined);
      }
    });
  }

  const text = (() => {
    let t = sarifHead({
      toolName: 'svc',
      toolVersion: '1.2.3',
      informationUri: 'https://example.test/docs/findings.md',
      rules: [{ id: 'secret-in-file', severity: 'high' }],
      properties: {},
    });
    CASES.forEach(([reported], i) => {
      const r = sarifResult(finding(i, reported));
      assert.ok('json' in r);
      t += sarifSeparator(i) + r.json;
    });
    return t + sarifTail({ refused: [], refusedTotal: 0, truncated: false, emitted: CASES.length });
  })();

  it('a log of every awkward path is valid against the official schema', () => {
    assert.deepEqual(sarifSchemaErrors(JSON.parse(text)), []);
  });

  it('sarif-multitool validate with the SARIF and GitHub rules reports no error', { skip: multitoolSkip() }, () => {
    // A file name with a space and a '#' of its own: the validator is handed the path as one argument.
    const file = path.join(tempDir('svc-sarif-'), 'awkward #1.sarif');
    writeFileSync(file, text);
    assert.deepEqual(multitoolErrors(file), []);
    // The same check fails on what the encoder used to write: a '#' left in a relative reference.
    const old = text.replace('docs/my%20file%20%231%20%C3%BC.md', 'docs/my%20file%20#1%20%C3%BC.md');
    assert.notEqual(old, text);
    const bad = path.join(tempDir('svc-sarif-'), 'old.sarif');
    writeFileSync(bad, old);
    assert.deepEqual(
      multitoolErrors(bad).map((e) => e.ruleId),
      ['SARIF1002'],
    );
  });
});
