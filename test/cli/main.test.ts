import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonOut, runSvc } from './harness.js';

describe('svc root (spawned binary)', () => {
  it('exits 2 (Usage) on an unknown command, with one error line on stderr', async () => {
    const run = await runSvc(['no-such-command']);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^svc: usage: unknown command; run "svc --help" for usage\n$/);
  });

  it('exits 2 on an unknown flag and on a bad -o value, with the error envelope on stdout under -o json', async () => {
    const unknownFlag = await runSvc(['version', '--bogus', '-o', 'json']);
    assert.equal(unknownFlag.code, 2);
    const doc = jsonOut(unknownFlag);
    assert.equal(doc.error.code, 'usage');
    assert.equal(doc.error.exit_code, 2);
    assert.match(doc.error.message, /--bogus/);
    const badOutput = await runSvc(['version', '-o', 'yaml']);
    assert.equal(badOutput.code, 2);
    assert.match(badOutput.stderr, /^svc: usage: .*"yaml"/);
  });

  it('exits 2 and prints usage on stderr when run with no arguments', async () => {
    const run = await runSvc([]);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /svc <command>/);
  });

  it('answers --help with exit 0 and lists the commands', async () => {
    const run = await runSvc(['--help']);
    assert.equal(run.code, 0);
    for (const path of ['svc version', 'svc openapi', 'svc status', 'svc health']) assert.ok(run.stdout.includes(path), path);
  });

  it('describes every command and every option in its clipanion definitions (source of docs/cli.md)', async () => {
    const run = await runSvc(['--clipanion=definitions']);
    assert.equal(run.code, 0);
    const definitions = JSON.parse(run.stdout) as Array<{
      path: string;
      category?: string;
      description?: string;
      options: Array<{ definition: string; description?: string }>;
    }>;
    const paths = definitions.map((d) => d.path);
    for (const path of ['svc health', 'svc openapi', 'svc status', 'svc version']) assert.ok(paths.includes(path), path);
    for (const def of definitions) {
      assert.ok(def.category?.trim(), `${def.path} has a category`);
      assert.ok(def.description?.trim(), `${def.path} has a description`);
      for (const option of def.options) assert.ok(option.description?.trim(), `${def.path} ${option.definition} has a description`);
    }
  });
});
