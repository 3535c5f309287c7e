/** Sealed secrets: AES-256-GCM bound to the record id, key file rules (DECISIONS.md "Sealed secrets"). */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadSealer, secretHint, SealError } from '../../src/secrets/sealing.js';

describe('sealing', () => {
  it('round-trips, never shows the value, and is bound to the record id', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-seal-'));
    const s = await loadSealer(dir, {});
    const sealed = s.seal('hunter2-very-secret', 'rec-1');
    assert.ok(!sealed.includes('hunter2'));
    assert.notEqual(sealed, s.seal('hunter2-very-secret', 'rec-1'), 'a fresh nonce per value');
    assert.equal(s.open(sealed, 'rec-1'), 'hunter2-very-secret');
    assert.throws(() => s.open(sealed, 'rec-2'), SealError);
    const [p, k, b] = sealed.split(':');
    const body = Buffer.from(b!, 'base64url');
    body[14] = (body[14] ?? 0) ^ 1;
    assert.throws(() => s.open(`${p}:${k}:${body.toString('base64url')}`, 'rec-1'), SealError);
    assert.equal(statSync(path.join(dir, 'secrets.key')).mode & 0o777, 0o600);
    const again = await loadSealer(dir, {});
    assert.equal(again.open(sealed, 'rec-1'), 'hunter2-very-secret', 'the minted key is kept');
  });

  it('a configured key file must exist and be private; another key does not open', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-seal-'));
    const file = path.join(dir, 'k.hex');
    await assert.rejects(loadSealer(dir, { SERVICE_SECRETS_KEY_FILE: file }), /does not exist/);
    writeFileSync(file, 'ab'.repeat(32));
    chmodSync(file, 0o644);
    await assert.rejects(loadSealer(dir, { SERVICE_SECRETS_KEY_FILE: file }), /readable by group or others/);
    chmodSync(file, 0o600);
    const s = await loadSealer(dir, { SERVICE_SECRETS_KEY_FILE: file });
    const minted = await loadSealer(mkdtempSync(path.join(tmpdir(), 'svc-seal-')), {});
    assert.throws(() => minted.open(s.seal('x', 'r'), 'r'), /sealed with key/);
    assert.equal(readFileSync(file, 'utf8'), 'ab'.repeat(32));
  });

  it('hints show at most the last four characters, none for short values', () => {
    assert.equal(secretHint('abcdefghijkl'), 'ijkl');
    assert.equal(secretHint('short'), '');
  });
});
