#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
import('../dist/src/cli/main.js').then((m) => m.main(process.argv.slice(2))).catch((err) => {
  process.stderr.write(`svc: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
