/**
 * `svc audit verify --file` on exports: a chain written in every ledger export format (the bytes the
 * export route sends, hostile values included) verifies offline with the pinned key, in chunks over
 * worker threads; tampering with an export line, dropping or cutting lines is caught with the
 * right reason, seq and exit code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encoderFor, acceptedTokens } from '../../src/encoders/registry.js';
import { terminatorLine } from '../../src/core/audit-export/export-stream.js';
import { sealBatch, type ChainTail } from '../../src/ledger/chain.js';
import { checkpointDraft } from '../../src/ledger/checkpoint.js';
import type { AuditDraft, AuditRecord } from '../../src/ledger/record.js';
import { publicKeyBytes } from '../../src/ledger/signers.js';
import { newSigner, TENANT } from '../ledger/fixtures.js';
import { jsonOut, runSvc, tempDir } from './harness.js';

const dir = tempDir('svc-verify-export-');
const signer = newSigner('ed25519');
const pubkey = publicKeyBytes('ed25519', signer.publicKey).toString('base64');
const HOSTILE = 'a\r\nb\tc\0d%25e\\f|g=h"i]j\x7fk😀l ';
const N = 3000;

/** A chain of N records, a checkpoint every 1,000, every 7th record with hostile text in every free field. */
function chain(): AuditRecord[] {
  const out: AuditRecord[] = [];
  let tail: ChainTail | null = null;
  while (out.length < N) {
    const drafts: AuditDraft[] = [];
    for (let seq = out.length + 1; seq <= Math.min(N, out.length + 500); seq++) {
      if (seq % 1000 === 0) drafts.push(checkpointDraft());
      else if (seq % 7 === 0)
        drafts.push({
          actor: `user:${HOSTILE}`,
          actor_kind: 'user',
          action: `agent.${HOSTILE}`,
          target_kind: `k${HOSTILE}`,
          target_id: HOSTILE,
          meta: { note: HOSTILE, n: seq },
          payload_hash: 'e3'.repeat(32),
        });
      else
        drafts.push({
          actor: 'user:0190a8e2-0000-7000-8000-000000000007',
          actor_kind: 'user',
          action: 'agent.update',
          target_kind: 'agent',
          target_id: `a-${seq}`,
          meta: { n: seq },
        });
    }
    const recs = sealBatch(tail, TENANT, drafts, signer);
    const last = recs[recs.length - 1] as AuditRecord;
    tail = { seq: last.seq, hash: last.hash };
    out.push(...recs);
  }
  return out;
}

const records = chain();
const OPTS = { device: { vendor: 'svc', product: 'control-plane', version: '1.0.0' }, hostname: 'svc-test', procid: '1' };

/** The export of `recs` in `format` as the route writes it: one line per record, then the terminator. */
function exportLines(format: string, recs: readonly AuditRecord[]): string[] {
  const enc = encoderFor('ledger_export', format);
  return recs.map((r) => enc.encodeRecord(r, OPTS));
}

function write(name: string, lines: readonly string[], terminator: string | null): string {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n') + '\n' + (terminator ?? ''));
  return path;
}

async function verify(path: string, ...extra: string[]) {
  const run = await runSvc(['audit', 'verify', '--file', path, '--pubkey', pubkey, '-o', 'json', ...extra], { timeoutMs: 60_000 });
  return { code: run.code, report: jsonOut(run), stderr: run.stderr };
}

for (const format of acceptedTokens('ledger_export')) {
  test(`a ${format} export verifies offline: chain, ${N / 1000} checkpoints and every signature`, async () => {
    const enc = encoderFor('ledger_export', format);
    const path = write(`ok.${format}`, exportLines(format, records), terminatorLine(enc.json, N, N));
    const r = await verify(path, '--strict');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.report.ok, true, JSON.stringify(r.report));
    assert.equal(r.report.chain.checked, N);
    const cp = r.report.checkpoints;
    assert.deepEqual([cp.status, cp.count, cp.latest_attested_seq], ['ok', N / 1000, N - 1]);
    assert.equal(r.report.signatures.checked, N);
    assert.equal(r.stderr, '', 'no warning for a complete export');
  });
}

test('an edited CEF value is hash-mismatch at its seq (exit 7 with --strict); one thread gives the same report', async () => {
  const lines = exportLines('cef', records);
  lines[2100] = (lines[2100] as string).replace('suser=user:', 'suser=user:mallory-');
  const path = write('edited.cef', lines, terminatorLine(false, N, N));
  const r = await verify(path, '--strict');
  assert.equal(r.code, 7);
  assert.deepEqual([r.report.chain.reason, r.report.chain.break_at, r.report.chain.checked], ['hash-mismatch', 2101, 2100]);
  const single = await verify(path, '--threads', '0');
  assert.equal(single.code, 0);
  assert.deepEqual(single.report, r.report);
});

test('a dropped LEEF line is seq-gap; an OCSF export cut short is tail-truncated against its terminator', async () => {
  const leef = exportLines('leef', records);
  leef.splice(2200, 1);
  const gap = await verify(write('gap.leef', leef, terminatorLine(false, N, N)), '--strict');
  assert.equal(gap.code, 7);
  assert.deepEqual([gap.report.chain.reason, gap.report.chain.break_at], ['seq-gap', 2201]);
  const cut = await verify(write('cut.ocsf', exportLines('ocsf', records.slice(0, 2000)), terminatorLine(true, N, N)), '--strict');
  assert.equal(cut.code, 7);
  assert.deepEqual([cut.report.chain.reason, cut.report.chain.break_at], ['tail-truncated', 2001]);
});

for (const format of acceptedTokens('ledger_export')) {
  test(
    `a ${format} export cut before its terminator is not complete: exit ` +
      `8 (indeterminate) under --strict, complete: false in the report`,
    async () => {
      const cut = write(`noterm.${format}`, exportLines(format, records.slice(0, 1200)), null);
      const strict = await verify(cut, '--strict');
      assert.equal(strict.code, 8, strict.stderr);
      assert.equal(strict.report.complete, false);
      assert.equal(strict.report.chain.checked, 1200, 'what is there is still verified');
      assert.match(strict.stderr, /no export-complete line; it may be cut short/);
      const lax = await verify(cut);
      assert.equal(lax.code, 0, lax.stderr);
      assert.equal(lax.report.complete, false);
      // Cut mid-line: the last record's line is partial.
      const whole = exportLines(format, records.slice(0, 50)).join('\n');
      const partial = join(dir, `partial.${format}`);
      writeFileSync(partial, whole.slice(0, whole.length - 40));
      const p = await runSvc(['audit', 'verify', '--file', partial, '--pubkey', pubkey, '-o', 'json', '--strict'], { timeoutMs: 60_000 });
      assert.notEqual(p.code, 0, 'a file cut mid-line never verifies clean under --strict');
      const done = await verify(
        write(
          `term.${format}`,
          exportLines(format, records.slice(0, 1200)),
          terminatorLine(encoderFor('ledger_export', format).json, 1200, 1200),
        ),
        '--strict',
      );
      assert.equal(done.code, 0, done.stderr);
      assert.equal(done.report.complete, true);
    },
  );
}

test('records after an export\'s terminator make it incomplete (the terminator must be its last line)', async () => {
  const enc = encoderFor('ledger_export', 'cef');
  const lines = [
    ...exportLines('cef', records.slice(0, 100)),
    terminatorLine(enc.json, 100, 100),
    ...exportLines('cef', records.slice(100, 110)),
  ];
  const r = await verify(write('after-term.cef', lines, null), '--strict');
  assert.equal(r.report.complete, false);
  assert.equal(r.code, 8);
});

test('a replaced signature in an OTLP line is sig-invalid; a file of no known format is refused by line', async () => {
  const lines = exportLines('otlp_log_record', records.slice(0, 100));
  const other = JSON.parse(lines[51] as string) as { attributes: Array<{ key: string; value: { stringValue?: string } }> };
  const sig = other.attributes.find((a) => a.key === 'svc.audit.sig')?.value.stringValue as string;
  lines[50] = (lines[50] as string).replace(
    /"svc\.audit\.sig","value":\{"stringValue":"[^"]+"/,
    `"svc.audit.sig","value":{"stringValue":"${sig}"`,
  );
  const r = await verify(write('sig.otlp', lines, terminatorLine(true, 100, 100)));
  assert.equal(r.code, 0);
  assert.deepEqual([r.report.signatures.reason, r.report.signatures.first_bad_seq], ['sig-invalid', 51]);
  const junk = await runSvc(['audit', 'verify', '--file', write('junk.txt', ['', 'hello world'], null), '--pubkey', pubkey]);
  assert.equal(junk.code, 1);
  assert.match(junk.stderr, /line 2 is not a record of any ledger export format/);
  const wrong = await runSvc([
    'audit',
    'verify',
    '--file',
    write('wrong.cef', exportLines('cef', records.slice(0, 3)), null),
    '--format',
    'leef',
    '--pubkey',
    pubkey,
  ]);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /line 1 is not a leef ledger record: not a LEEF:2.0 line/);
});

test('an export read from stdin verifies like the file', async () => {
  const text = exportLines('otlp_envelope', records.slice(0, 300)).join('\n') + '\n' + terminatorLine(true, 300, 300);
  const run = await runSvc(['audit', 'verify', '--file', '-', '--pubkey', pubkey, '-o', 'json', '--strict'], { stdin: text });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(jsonOut(run).chain.checked, 300);
});
