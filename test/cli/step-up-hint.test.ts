/**
 * Issue 30 item 17: a `step_up_required` refusal tells the user where to step up (the full URL of
 * the server's `/ui/step-up` page, a page that exists there) and what to do next.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startServer, type TestServer } from '../helpers/server.js';
import { jsonOut, runSvc, tempDir } from './harness.js';
import { join } from 'node:path';

describe('svc on step_up_required', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
  });

  it('names the step-up page of that server and the next step, in text and JSON', async () => {
    const env = { SERVICE_CONFIG: join(tempDir('svc-stepup-'), 'config.yaml') };
    const trust = ['--server', server.url, '--pin-sha256', String(server.pinSha256)];
    const token = /svcst_[A-Z2-7]+/.exec(server.stdout())?.[0] as string;
    const boot = await runSvc(
      [
        'auth',
        'bootstrap',
        ...trust,
        '--setup-token',
        token,
        '--email',
        'a@example.test',
        '--password',
        'a long enough passphrase',
        '--save-context',
        '-o',
        'json',
      ],
      { env },
    );
    assert.equal(boot.code, 0, boot.stderr);
    const tenant = jsonOut(boot).organization.id as string;

    const run = await runSvc(['tenants', 'set-region', tenant, 'eu-west', '-y'], { env });
    assert.equal(run.code, 3, run.stderr);
    // WebAuthn refuses IP literals, so the page is offered on localhost, same port.
    const page = `https://localhost:${server.port}/ui/step-up`;
    assert.equal(run.stderr.split('\n').filter(Boolean).length, 1, 'still one line');
    assert.ok(run.stderr.includes(page), run.stderr);
    assert.match(run.stderr, /run the command again/);
    const json = jsonOut(await runSvc(['tenants', 'set-region', tenant, 'eu-west', '-y', '-o', 'json'], { env }));
    assert.equal(json.error.code, 'step_up_required');
    assert.ok(json.error.message.includes(page));
    const served = await request(`${server.url}/ui/step-up`, { dispatcher: server.dispatcher });
    assert.equal(served.statusCode, 200, 'the page the hint names exists');
    await served.body.dump();
  });
});
