/**
 * Issue 30 item 14: a reader that goes away (`svc openapi | head`) ends `svc` quietly: no EPIPE
 * stack trace on stderr, exit 0, whatever command was writing.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, tempDir } from './harness.js';

/** Runs `svc ARGS | head -c 1` in bash and returns svc's own exit status and stderr. */
function piped(args: string): { status: number; stderr: string } {
  const dir = tempDir('svc-pipe-');
  const err = join(dir, 'stderr');
  const script = `node bin/svc.js ${args} 2>"${err}" | head -c 1 >/dev/null; status=\${PIPESTATUS[0]}; cat "${err}" >&2; exit $status`;
  const run = spawnSync('bash', ['-c', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, SERVICE_CONFIG: join(dir, 'config.yaml'), NO_COLOR: '1' },
  });
  return { status: run.status ?? -1, stderr: run.stderr };
}

describe('svc writing into a closed pipe', () => {
  for (const args of ['openapi', 'openapi --beta', '--clipanion=definitions', 'completion bash']) {
    it(`svc ${args} | head -c 1 exits 0 with nothing on stderr`, () => {
      const run = piped(args);
      assert.equal(run.stderr, '', `no stack trace: ${run.stderr}`);
      assert.equal(run.status, 0);
    });
  }
});
