#!/usr/bin/env node
// The whole test suite: type-check and build, then Node's test runner over every compiled test.
// Node 20's `--test` takes no globs, so the files are collected here.
// Extra arguments narrow the run: `npm test -- test/http` runs only that folder.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });

const build = run('npm', ['run', '--silent', 'build']);
if (build.status !== 0) {
  console.error('test: the build failed (see the tsc errors above); no test was run');
  process.exit(build.status ?? 1);
}

const filters = process.argv.slice(2).map((f) => path.join('dist', f.replace(/\.ts$/, '.js')));
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full);
    else if (name.endsWith('.test.js')) files.push(path.relative(root, full));
  }
};
walk(path.join(root, 'dist', 'test'));
const selected = filters.length ? files.filter((f) => filters.some((p) => f.startsWith(p))) : files;
if (selected.length === 0) {
  console.error(`test: no test file matched ${filters.join(' ') || 'dist/test/**/*.test.js'}`);
  process.exit(1);
}
const concurrency = process.env.SVC_TEST_CONCURRENCY ?? '3';
// SVC_TEST_TIMINGS=<file>: also write each test file's time there, slowest first (scripts/file-timings.mjs).
const timings = process.env.SVC_TEST_TIMINGS
  ? [
      '--test-reporter-destination=stdout',
      '--test-reporter=./scripts/file-timings.mjs',
      `--test-reporter-destination=${process.env.SVC_TEST_TIMINGS}`,
    ]
  : [];
const result = run(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...timings, ...selected]);
process.exit(result.status ?? 1);
