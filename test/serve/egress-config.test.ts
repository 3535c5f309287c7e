/**
 * `svc serve` refuses to start (exit 2, "configuration refused" naming the variable) with
 * NODE_TLS_REJECT_UNAUTHORIZED set to turn off certificate verification (issue 47 item 10: it would
 * reach TLS clients of libraries svc does not control), and with an unreadable egress allowlist.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { runServeExpectingExit, tempDir } from '../helpers/server.js';

test('svc serve refuses NODE_TLS_REJECT_UNAUTHORIZED=0 and a bad SERVICE_EGRESS_ALLOW_PRIVATE with exit 2', async () => {
  const dir = tempDir('svc-egress-config-');
  try {
    const args = ['--data-dir', dir, '--listen', '127.0.0.1:0', '--grpc-listen', '127.0.0.1:0'];
    for (const value of ['0', 'false']) {
      const r = await runServeExpectingExit(args, { NODE_TLS_REJECT_UNAUTHORIZED: value });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /configuration refused: NODE_TLS_REJECT_UNAUTHORIZED=.* would turn off certificate verification/);
    }
    const bad = await runServeExpectingExit(args, { SERVICE_EGRESS_ALLOW_PRIVATE: '10.0.0.0/8,10.0.0.0/33' });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /SERVICE_EGRESS_ALLOW_PRIVATE: "10\.0\.0\.0\/33" is not a range/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
