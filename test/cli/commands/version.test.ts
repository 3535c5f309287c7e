import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { getFips } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, REPO_ROOT, runSvc, tempDir } from '../harness.js';

describe('svc version', () => {
  it('-o json gives the stable object: version, commit, build date, OS/arch, Node version, FIPS mode', async () => {
    const run = await runSvc(['version', '-o', 'json']);
    assert.equal(run.code, 0, run.stderr);
    const doc = jsonOut(run);
    assert.deepEqual(Object.keys(doc).sort(), ['arch', 'build_date', 'commit', 'fips', 'node_version', 'os', 'version']);
    assert.equal(doc.os, process.platform);
    assert.equal(doc.arch, process.arch);
    assert.equal(doc.node_version, process.version);
    assert.equal(doc.fips, getFips() === 1);
    const stamp = join(REPO_ROOT, 'dist', 'build-info.json');
    if (existsSync(stamp)) {
      const info = JSON.parse(readFileSync(stamp, 'utf8')) as { version: string; commit: string; buildDate: string };
      assert.deepEqual([doc.version, doc.commit, doc.build_date], [info.version, info.commit, info.buildDate]);
    } else {
      assert.deepEqual([doc.version, doc.commit], ['dev', 'unknown']);
    }
  });

  it('text output names every field', async () => {
    const run = await runSvc(['version']);
    assert.equal(run.code, 0);
    for (const label of ['version:', 'commit:', 'built:', 'os/arch:', 'node:', 'fips:']) assert.ok(run.stdout.includes(label), label);
  });
});

describe('scripts/build-info.mjs', () => {
  // Runs a copy of the script inside a throwaway repository, so tags and commits are under test control.
  const stamp = (root: string): { version: string; commit: string; buildDate: string } => {
    execFileSync(process.execPath, [join(root, 'scripts', 'build-info.mjs')], {
      cwd: root,
      env: { ...process.env, GIT_CEILING_DIRECTORIES: root, SOURCE_DATE_EPOCH: '1700000000' },
      stdio: 'ignore',
    });
    return JSON.parse(readFileSync(join(root, 'dist', 'build-info.json'), 'utf8')) as {
      version: string;
      commit: string;
      buildDate: string;
    };
  };
  const project = (): string => {
    const root = tempDir('svc-buildinfo-');
    mkdirSync(join(root, 'scripts'));
    copyFileSync(join(REPO_ROOT, 'scripts', 'build-info.mjs'), join(root, 'scripts', 'build-info.mjs'));
    return root;
  };
  const git = (root: string, ...args: string[]): string =>
    execFileSync(
      'git',
      ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args],
      {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, GIT_CEILING_DIRECTORIES: root },
      },
    ).trim();

  it('does not fail without git metadata: dev, unknown', () => {
    const info = stamp(project());
    assert.deepEqual(info, { version: 'dev', commit: 'unknown', buildDate: '2023-11-14T22:13:20.000Z' });
  });

  it('reports the v* tag only when HEAD is exactly on it, and always the commit', () => {
    const root = project();
    git(root, 'init', '-q');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'one');
    const first = git(root, 'rev-parse', 'HEAD');
    assert.deepEqual(stamp(root), { version: 'dev', commit: first, buildDate: '2023-11-14T22:13:20.000Z' });
    git(root, 'tag', 'v1.2.3');
    assert.equal(stamp(root).version, 'v1.2.3');
    git(root, 'commit', '-q', '--allow-empty', '-m', 'two');
    git(root, 'tag', 'release-9');
    const second = stamp(root);
    assert.equal(second.version, 'dev', 'a commit after the tag, or a non-v tag, is not a release');
    assert.equal(second.commit, git(root, 'rev-parse', 'HEAD'));
  });
});
