/**
 * Issue 30 item 16: `svc status` against a real server that still waits for its setup token says
 * `setup_required` and exits 7 (Degraded), not `ok`/0; after the setup it is `ok` again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../../helpers/server.js';
import { jsonOut, runSvc } from '../harness.js';

describe('svc status on a server needing setup', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('reports setup_required with exit 7, in text and JSON, and ok once set up', async () => {
    const trust = ['--server', server.url, '--pin-sha256', String(server.pinSha256)];
    const text = await runSvc(['status', ...trust]);
    assert.equal(text.code, 7, text.stderr);
    assert.match(text.stdout, /^status:\s+setup_required/m);
    assert.match(text.stdout, /svc auth bootstrap/);
    const json = await runSvc(['status', ...trust, '-o', 'json']);
    assert.equal(json.code, 7);
    const doc = jsonOut(json);
    assert.equal(doc.status, 'setup_required');
    assert.equal(doc.setup_required, true);

    const token = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0] as string;
    const boot = await runSvc([
      'auth',
      'bootstrap',
      ...trust,
      '--setup-token',
      token,
      '--email',
      'a@example.test',
      '--password',
      'a long enough passphrase',
    ]);
    assert.equal(boot.code, 0, boot.stderr);
    const ok = await runSvc(['status', ...trust, '-o', 'json']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(jsonOut(ok).status, 'ok');
  });
});
