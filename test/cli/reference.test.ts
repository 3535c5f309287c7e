import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ExitCode } from '../../src/cli/client/exit-codes.js';
import { commands } from '../../src/cli/commands/index.js';
import { buildCli } from '../../src/cli/main.js';
import { REFERENCE_BEGIN, REFERENCE_END, renderCliReference } from '../../src/cli/reference.js';
import { REPO_ROOT } from './harness.js';

describe('docs/cli.md command reference', () => {
  it('matches the binary’s clipanion definitions (regenerate: node scripts/cli-docs.mjs)', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const start = doc.indexOf(REFERENCE_BEGIN);
    const end = doc.indexOf(REFERENCE_END);
    assert.ok(start >= 0 && end > start, 'generated-section markers present');
    assert.equal(doc.slice(start, end + REFERENCE_END.length), renderCliReference(buildCli(), commands));
  });

  it('documents every exit code the client defines, by number and name', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    for (const [name, code] of Object.entries(ExitCode)) {
      assert.match(doc, new RegExp(`^\\| ${code} \\| ${name} \\|`, 'm'), `${code} ${name}`);
    }
  });
});
