/**
 * Issue 30 item 20: the repository carries its licence (Apache-2.0, matching package.json), a
 * security policy (how to report a vulnerability, and what the service promises) and a changelog.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/server.js';

const read = (name: string) => {
  assert.ok(existsSync(join(REPO_ROOT, name)), `${name} exists`);
  return readFileSync(join(REPO_ROOT, name), 'utf8');
};

describe('project files', () => {
  it('LICENSE is the Apache License 2.0 and package.json says so', () => {
    const license = read('LICENSE');
    assert.match(license, /Apache License\s+Version 2\.0, January 2004/);
    assert.match(license, /END OF TERMS AND CONDITIONS/);
    const pkg = JSON.parse(read('package.json')) as { license?: string };
    assert.equal(pkg.license, 'Apache-2.0');
  });

  it('SECURITY.md says how to report a vulnerability and what the service promises', () => {
    const policy = read('SECURITY.md');
    assert.match(policy, /^## Reporting a vulnerability/m);
    assert.match(policy, /not .*public issue/i);
    for (const promise of [/TLS by default/i, /no default credentials/i, /deny by default/i, /ledger/i, /hash-chained/i, /signed/i])
      assert.match(policy, promise);
  });

  it('CHANGELOG.md starts from what exists, newest first, with the current version', () => {
    const log = read('CHANGELOG.md');
    const pkg = JSON.parse(read('package.json')) as { version: string };
    assert.match(log, /^## \[Unreleased\]/m);
    assert.ok(log.includes(`## [${pkg.version}]`), `a section for ${pkg.version}`);
    assert.ok(log.indexOf('## [Unreleased]') < log.indexOf(`## [${pkg.version}]`));
  });
});
