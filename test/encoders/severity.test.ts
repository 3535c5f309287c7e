import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DETERMINED_SEVERITIES, SEVERITY, type SeverityRow } from '../../src/encoders/severity.js';
import { ledgerSeverity } from '../../src/encoders/ledger-fields.js';
import { RECOVERED_ACTION } from '../../src/ledger/audit-intent.js';
import { syslogPri } from '../../src/encoders/syslog.js';

const COLUMNS: Array<keyof SeverityRow> = ['cef', 'syslog', 'otlpText', 'otlpNumber', 'ecs', 'udm', 'leef'];

describe('severity map (spec: Events → Severity mapping)', () => {
  it('matches the spec table row by row', () => {
    // The spec's table, transcribed: product → CEF, syslog, OTLP, ECS, UDM.
    const spec: Array<[string, number, number, string, number, string | null]> = [
      ['info', 1, 6, 'INFO', 1, 'INFORMATIONAL'],
      ['low', 3, 5, 'INFO2', 3, 'LOW'],
      ['medium', 5, 4, 'WARN', 5, 'MEDIUM'],
      ['high', 7, 3, 'ERROR', 7, 'HIGH'],
      ['critical', 10, 2, 'FATAL', 10, 'CRITICAL'],
      ['undetermined', 0, 6, 'UNSPECIFIED', 0, null],
    ];
    for (const [sev, cef, syslog, otlp, ecs, udm] of spec) {
      const row = SEVERITY[sev as keyof typeof SEVERITY];
      assert.deepEqual([row.cef, row.syslog, row.otlpText, row.ecs, row.udm], [cef, syslog, otlp, ecs, udm], sev);
    }
  });

  it('property: the five determined severities never share a value in any column (rule 1)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...COLUMNS),
        fc.constantFrom(...DETERMINED_SEVERITIES),
        fc.constantFrom(...DETERMINED_SEVERITIES),
        (col, a, b) => {
          if (a !== b) assert.notEqual(SEVERITY[a][col], SEVERITY[b][col], `${col}: ${a} vs ${b}`);
        },
      ),
      { numRuns: 500 },
    );
    for (const col of COLUMNS) assert.equal(new Set(DETERMINED_SEVERITIES.map((s) => SEVERITY[s][col])).size, 5, col);
  });

  it('never invents an undetermined severity (rule 2; LEEF rule 1)', () => {
    assert.equal(SEVERITY.undetermined.cef, 0);
    assert.equal(SEVERITY.undetermined.leef, 1);
    assert.equal(SEVERITY.undetermined.udm, null);
    assert.equal(SEVERITY.undetermined.otlpNumber, 0);
  });

  it('keeps numeric columns in their ranges and ordered with the product severity', () => {
    const ranges: Array<[keyof SeverityRow, number, number]> = [
      ['cef', 0, 10],
      ['syslog', 0, 7],
      ['ecs', 0, 10],
      ['leef', 1, 10],
      ['otlpNumber', 0, 24],
    ];
    for (const [col, lo, hi] of ranges) {
      const vals = DETERMINED_SEVERITIES.map((s) => SEVERITY[s][col] as number);
      for (const v of vals) assert.ok(Number.isInteger(v) && v >= lo && v <= hi, `${col}=${v}`);
      const sorted = [...vals].sort((x, y) => x - y);
      // syslog numbers fall as severity rises (RFC 5424 §6.2.1: 0 = emergency).
      assert.deepEqual(vals, col === 'syslog' ? sorted.reverse() : sorted, col);
    }
  });

  it('derives the syslog PRI from local0 and the syslog column: info = 134 (DECISIONS.md)', () => {
    assert.equal(syslogPri('info'), 134);
    assert.equal(syslogPri('critical'), 130);
    assert.equal(syslogPri('undetermined'), 134);
  });

  it('gives ledger records a deterministic severity from the action alone', () => {
    assert.equal(ledgerSeverity({ action: 'agent.create' }), 'info');
    assert.equal(ledgerSeverity({ action: 'audit.read' }), 'info');
    assert.equal(ledgerSeverity({ action: 'token.revoke' }), 'low');
    assert.equal(ledgerSeverity({ action: 'audit.export' }), 'low');
    assert.equal(ledgerSeverity({ action: 'auth.login_failed' }), 'medium');
    assert.equal(ledgerSeverity({ action: 'policy.DENY' }), 'medium');
    assert.equal(ledgerSeverity({ action: 'audit.tamper-detected' }), 'high');
    // A change recorded after its own record was lost (ledger/audit-intent.ts) stands out.
    assert.equal(ledgerSeverity({ action: RECOVERED_ACTION }), 'medium');
    // "failed" wins over "delete"; an alarm wins over a failure.
    assert.equal(ledgerSeverity({ action: 'agent.delete.failed' }), 'medium');
    assert.equal(ledgerSeverity({ action: 'audit.verify.failed.tamper' }), 'high');
    // Words match whole, not as substrings.
    assert.equal(ledgerSeverity({ action: 'agent.exportable' }), 'info');
  });
});
