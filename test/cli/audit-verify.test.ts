/**
 * `svc audit verify --file`: the built binary checks NDJSON files of records (as `GET /v1/audit`
 * serves them) with keys the auditor pins; tampered files give the right reason, seq and exit code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AuditRecord } from '../../src/ledger/record.js';
import { eventSigPreimage } from '../../src/ledger/preimage.js';
import { publicKeyBytes, type Signer } from '../../src/ledger/signers.js';
import { buildChain, headOf, newSigner, TENANT } from '../ledger/fixtures.js';
import { jsonOut, runSvc, startFakeServer, tempDir } from './harness.js';

const dir = tempDir('svc-audit-verify-');
const ed = newSigner('ed25519');
const chain = buildChain(ed, 60, { checkpointEvery: 20 });
const bare = (s: Signer): string => publicKeyBytes(s.algorithm, s.publicKey).toString('base64');

function file(name: string, records: readonly AuditRecord[], trailer?: object): string {
  const path = join(dir, name);
  const lines = records.map((r) => JSON.stringify(r));
  if (trailer) lines.push(JSON.stringify(trailer));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

function edited(i: number, patch: Partial<AuditRecord>): AuditRecord[] {
  return chain.map((r, k) => (k === i ? { ...r, ...patch } : r));
}

async function verify(path: string, ...extra: string[]) {
  const run = await runSvc(['audit', 'verify', '--file', path, '-o', 'json', ...extra]);
  return { code: run.code, report: jsonOut(run), stderr: run.stderr };
}

test('an intact file verifies with a bare pinned Ed25519 key; --strict still exits 0', async () => {
  const path = file('ok.ndjson', chain, { export_complete: true, count: 60, last_seq: 60 });
  const r = await verify(path, '--pubkey', bare(ed), '--strict');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.report.ok, true);
  assert.equal(r.report.chain.checked, 60);
  assert.equal(r.report.checkpoints.status, 'ok');
  assert.equal(r.report.checkpoints.count, 3); // seq 20, 40, 60
  assert.equal(r.report.signatures.checked, 60);
  const text = await runSvc(['audit', 'verify', '--file', path, '--pubkey', `ed25519:${bare(ed)}`]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /verdict:\s+ok/);
});

test('a changed field is hash-mismatch at its seq: exit 0 with the report, 7 with --strict', async () => {
  const path = file('edited.ndjson', edited(14, { actor: 'user:mallory' }));
  const lax = await verify(path, '--pubkey', bare(ed));
  assert.equal(lax.code, 0);
  assert.equal(lax.report.ok, false);
  assert.deepEqual([lax.report.chain.reason, lax.report.chain.break_at], ['hash-mismatch', 15]);
  const strict = await verify(path, '--pubkey', bare(ed), '--strict');
  assert.equal(strict.code, 7);
});

test('a deleted line is seq-gap; a cut tail is tail-truncated against the export terminator', async () => {
  const gap = await verify(file('gap.ndjson', chain.filter((r) => r.seq !== 30)), '--pubkey', bare(ed), '--strict');
  assert.equal(gap.code, 7);
  assert.deepEqual([gap.report.chain.reason, gap.report.chain.break_at], ['seq-gap', 30]);
  const cut = await verify(
    file('cut.ndjson', chain.slice(0, 50), { export_complete: true, count: 60, last_seq: 60 }),
    '--pubkey',
    bare(ed),
    '--strict',
  );
  assert.equal(cut.code, 7);
  assert.deepEqual([cut.report.chain.reason, cut.report.chain.break_at], ['tail-truncated', 51]);
});

test('a swapped signature is sig-invalid; a record signed by an unsupplied key gives exit 8', async () => {
  const swapped = await verify(file('sig.ndjson', edited(9, { sig: (chain[10] as AuditRecord).sig })), '--pubkey', bare(ed));
  assert.equal(swapped.code, 0);
  assert.deepEqual([swapped.report.signatures.reason, swapped.report.signatures.first_bad_seq], ['sig-invalid', 10]);
  const other = newSigner('ed25519');
  const rec = chain[39] as AuditRecord;
  const foreign = edited(39, { key_id: other.keyId, sig: other.sign(eventSigPreimage(TENANT, rec.seq, rec.hash)).toString('base64') });
  const r = await verify(file('foreign.ndjson', foreign), '--pubkey', bare(ed));
  assert.equal(r.code, 8);
  assert.deepEqual([r.report.signatures.reason, r.report.signatures.first_bad_seq], ['unknown-key', 40]);
  // The whole chain under a key the auditor did not pin: no verdict either.
  const wrongKey = await verify(file('ok2.ndjson', chain), '--pubkey', bare(other), '--strict');
  assert.equal(wrongKey.code, 8);
});

test('several keys in <alg>:<base64> form verify a chain signed across a key change', async () => {
  const ec = newSigner('ecdsa-p256-sha256');
  const tail = buildChain(ec, 15, { tail: headOf(chain) });
  const both = [...chain, ...tail];
  const spec = (s: Signer): string => `${s.algorithm}:${publicKeyBytes(s.algorithm, s.publicKey).toString('base64')}`;
  const r = await verify(
    file('two-keys.ndjson', both, { export_complete: true, count: 75, last_seq: 75 }),
    '--pubkey',
    spec(ed),
    '--pubkey',
    spec(ec),
    '--strict',
  );
  assert.equal(r.code, 0, JSON.stringify(r.report));
  assert.equal(r.report.signatures.checked, 75);
  const onlyEd = await verify(file('two-keys-b.ndjson', both), '--pubkey', spec(ed));
  assert.equal(onlyEd.code, 8);
});

test('--from verifies a suffix anchored on the record before it; no --pubkey is a usage error', async () => {
  const path = file('from.ndjson', chain, { export_complete: true, count: 60, last_seq: 60 });
  const r = await verify(path, '--pubkey', bare(ed), '--from', '41', '--strict');
  assert.equal(r.code, 0, JSON.stringify(r.report));
  // Without its export-complete line the same file cannot be shown whole: no verdict under --strict.
  const open = await verify(file('from-open.ndjson', chain), '--pubkey', bare(ed), '--from', '41', '--strict');
  assert.deepEqual([open.code, open.report.complete, open.report.ok], [8, false, true]);
  assert.equal(r.report.chain.checked, 20);
  const bad = await verify(file('from-bad.ndjson', edited(40, { prev_hash: 'ab'.repeat(32) })), '--pubkey', bare(ed), '--from', '41');
  assert.deepEqual([bad.report.chain.reason, bad.report.chain.break_at], ['prev-mismatch', 41]);
  const usage = await runSvc(['audit', 'verify', '--file', path]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--pubkey/);
});

test('from the server: the head it serves (head_seq and head_hash) is checked against the record at that seq', async () => {
  const server = await startFakeServer();
  try {
    const serve = (headHash: string, headSeq = 60, items: readonly AuditRecord[] = chain) => {
      server.routes.set('GET /v1/audit?from=1&limit=1000', {
        status: 200,
        body: { items, has_more: false, head_seq: headSeq, head_hash: headHash },
      });
      for (const r of chain)
        server.routes.set(`GET /v1/audit?from=${r.seq}&limit=1`, {
          status: 200,
          body: { items: [r], has_more: r.seq < 60, head_seq: headSeq, head_hash: headHash },
        });
    };
    const live = async () => {
      const run = await runSvc([
        'audit',
        'verify',
        '--server',
        server.url,
        '--token',
        'svc_test',
        '--tenant',
        TENANT,
        '--pubkey',
        bare(ed),
        '--strict',
        '-o',
        'json',
      ]);
      return { code: run.code, report: jsonOut(run), stderr: run.stderr };
    };
    serve((chain[59] as AuditRecord).hash);
    const ok = await live();
    assert.equal(ok.code, 0, JSON.stringify(ok.report) + ok.stderr);
    assert.equal(ok.report.complete, true);
    // The heads table names another hash for the last record (a flipped audit_heads.hash): the server
    // reports hash-mismatch at the head, and so must the offline verifier.
    serve('ab'.repeat(32));
    const flipped = await live();
    assert.equal(flipped.code, 7, JSON.stringify(flipped.report));

    assert.deepEqual([flipped.report.chain.reason, flipped.report.chain.break_at, flipped.report.chain.checked], ['hash-mismatch', 60, 59]);
    // A head below the last record served is checked against that record too.
    serve('cd'.repeat(32), 40);
    const inside = await live();

    assert.equal(inside.code, 7, JSON.stringify(inside.report));
    assert.deepEqual([inside.report.chain.reason, inside.report.chain.break_at], ['hash-mismatch', 40]);
    // A head beyond the records served is a truncated tail, as before.
    serve('ef'.repeat(32), 62);
    const cut = await live();
    assert.deepEqual([cut.code, cut.report.chain.reason, cut.report.chain.break_at], [7, 'tail-truncated', 61]);
  } finally {
    await server.close();
  }
});
