// What the installed package must hold (runtime needs it) and must not (tests, sources, dev harness):
// checked on `npm pack --dry-run` by test/project-files.test.ts and on a real install by
// scripts/pack-install-check.mjs.
export const MUST_HAVE = [
  'bin/svc.js',
  'dist/src/cli/main.js',
  'dist/src/workers/export-worker.js',
  'dist/src/modules/security/sarif-worker.js',
  'dist/bench/lib/demo.js',
  'dist/web/index.html',
  'dist/build-info.json',
  'proto/olivares',
  'web/step-up.html',
  'bench/results',
];
export const MUST_NOT = ['dist/test', 'src', 'test', 'dist/bench/scenarios', 'node_modules', 'scripts'];
