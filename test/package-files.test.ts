/**
 * The package an operator installs (`npm pack`): it holds what runtime needs — the CLI, the compiled
 * server without its tests, the bench harness `svc bench` starts scratch servers with, the web
 * console, the proto files, reference bench results — and no tests or sources. A real install of the
 * tarball into an empty directory, with `svc bench` run from it, is scripts/pack-install-check.mjs
 * (minutes: it installs ~170 packages and may compile better-sqlite3), run as a release step.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/server.js';

const { MUST_HAVE, MUST_NOT } = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'package-files.mjs')).href)) as {
  MUST_HAVE: string[];
  MUST_NOT: string[];
};

describe('npm pack', () => {
  it('ships bin, dist without tests, the bench harness, web build, proto files and reference results; no sources or tests', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
    const has = (p: string): boolean => files.some((f) => f === p || f.startsWith(`${p}/`));
    assert.deepEqual(MUST_HAVE.filter((p) => !has(p)), [], 'missing from the tarball');
    assert.deepEqual(MUST_NOT.filter((p) => has(p)), [], 'in the tarball but must not be');
    assert.ok(!files.some((f) => f.endsWith('.test.js')), 'no compiled test');
    assert.ok(files.some((f) => f.startsWith('dist/src/') && f.endsWith('.js')) && files.includes('package.json'));
  });
});
