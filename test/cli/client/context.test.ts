import assert from 'node:assert/strict';
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configPath, readConfig, saveContext, selectContext, writeConfig } from '../../../src/cli/client/context.js';
import { CliError } from '../../../src/cli/client/errors.js';
import { tempDir } from '../harness.js';

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('saved contexts', () => {
  it('live in $SERVICE_CONFIG, else under XDG_CONFIG_HOME or ~/.config/svc', () => {
    assert.equal(configPath({ SERVICE_CONFIG: '/x/c.yaml', HOME: '/h' }), '/x/c.yaml');
    assert.equal(configPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' }), '/xdg/svc/config.yaml');
    assert.equal(configPath({ HOME: '/h' }), '/h/.config/svc/config.yaml');
  });

  it('are written with mode 0600 in a 0700 directory, even under a permissive umask, and read back', async () => {
    const dir = join(tempDir(), 'nested', 'svc');
    const path = join(dir, 'config.yaml');
    const previous = process.umask(0o000);
    try {
      await saveContext(path, 'prod', { server: 'https://cp.example', token: 'svck_x_y', pin_sha256: ['AAAA'] });
      await saveContext(path, 'dev', { server: 'https://127.0.0.1:8443' }, { makeCurrent: true });
    } finally {
      process.umask(previous);
    }
    assert.equal(mode(path), 0o600);
    assert.equal(mode(dir), 0o700);
    const config = await readConfig(path);
    assert.equal(config['current-context'], 'dev');
    assert.deepEqual(config.contexts.prod, { server: 'https://cp.example', token: 'svck_x_y', pin_sha256: ['AAAA'] });
    assert.deepEqual(selectContext(config, undefined, path), { server: 'https://127.0.0.1:8443' });
    assert.equal(selectContext(config, 'prod', path).token, 'svck_x_y');
    assert.throws(() => selectContext(config, 'nope', path), (err: unknown) => err instanceof CliError && err.exitCode === 2);
    // The atomic write leaves no temp files behind.
    assert.deepEqual(readdirSync(dir), ['config.yaml']);
  });

  it('replace the file by rename, so an existing wider-mode file ends up 0600', async () => {
    const path = join(tempDir(), 'config.yaml');
    writeFileSync(path, 'contexts: {}\n', { mode: 0o644 });
    const inodeBefore = statSync(path).ino;
    await writeConfig(path, { contexts: { a: { server: 'https://a' } } });
    assert.equal(mode(path), 0o600);
    assert.notEqual(statSync(path).ino, inodeBefore, 'a new file was renamed into place, not the old one rewritten');
  });

  it('refuse to read a file that group or others can read, naming the file and the chmod fix', async () => {
    const path = join(tempDir(), 'config.yaml');
    await writeConfig(path, { 'current-context': 'a', contexts: { a: { token: 'secret' } } });
    for (const bad of [0o644, 0o640, 0o604, 0o660]) {
      chmodSync(path, bad);
      await assert.rejects(readConfig(path), (err: unknown) => {
        assert.ok(err instanceof CliError);
        assert.equal(err.code, 'insecure_config');
        assert.match(err.message, new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*chmod 600`));
        return true;
      }, bad.toString(8));
    }
    chmodSync(path, 0o600);
    assert.equal((await readConfig(path)).contexts.a?.token, 'secret');
    chmodSync(path, 0o400);
    assert.equal((await readConfig(path)).contexts.a?.token, 'secret');
  });

  it('treat a missing file as empty and reject malformed content', async () => {
    const dir = tempDir();
    assert.deepEqual(await readConfig(join(dir, 'absent.yaml')), { contexts: {} });
    const path = join(dir, 'bad.yaml');
    for (const text of ['- a list\n', 'contexts: [1, 2]\n', 'contexts:\n  a:\n    token: 5\n', 'contexts:\n  a:\n    pin_sha256: x\n']) {
      writeFileSync(path, text, { mode: 0o600 });
      await assert.rejects(readConfig(path), (err: unknown) => err instanceof CliError && err.code === 'bad_config', text);
    }
  });
});
