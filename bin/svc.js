#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm ci` through the prepare script).
const argv = process.argv.slice(2);
if (argv[0] === 'claude-hook') {
  // The agent hook: a lean module (no command tree), and exit 2 on any failure to load or run it,
  // because Claude Code runs the tool on every other non-zero exit (docs/governance.md).
  const denyExit = (err) => {
    const why = `svc claude-hook could not run, so the call is denied: ${String((err && err.message) || err).split('\n')[0].slice(0, 300)}`;
    try {
      const out = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: why } };
      process.stdout.write(`${JSON.stringify(out)}\n`);
      process.stderr.write(`${why}\n`);
    } finally {
      process.exit(2);
    }
  };
  process.on('uncaughtException', denyExit);
  process.on('unhandledRejection', denyExit);
  import('../dist/src/cli/hook/claude-hook.js').then((m) => m.main(argv.slice(1))).catch(denyExit);
} else {
  import('../dist/src/cli/main.js').then((m) => m.main(argv)).catch((err) => {
    process.stderr.write(`svc: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  });
}
