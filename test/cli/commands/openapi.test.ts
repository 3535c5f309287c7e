import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildOpenApiDocument } from '../../../src/contract/openapi.js';
import { allRoutes } from '../../../src/routes.js';
import { runSvc } from '../harness.js';

describe('svc openapi', () => {
  it('prints exactly buildOpenApiDocument("stable"), pretty-printed', async () => {
    const run = await runSvc(['openapi']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), buildOpenApiDocument('stable', allRoutes()));
    assert.ok(run.stdout.startsWith('{\n  "openapi"'), 'pretty JSON');
    // The spec's 53 core paths, plus the documented on-demand checkpoint and connector redelivery
    // (test/core/console/contract-paths.test.ts).
    const extra = ['/v1/audit/checkpoint', '/v1/console/connectors/redeliver'];
    const paths = Object.keys((JSON.parse(run.stdout) as { paths: Record<string, unknown> }).paths);
    assert.equal(paths.filter((p) => !extra.includes(p)).length, 53, paths.join(' '));
  });

  it('prints the beta document with --beta, the same with -o json', async () => {
    const beta = await runSvc(['openapi', '--beta']);
    assert.equal(beta.code, 0, beta.stderr);
    assert.deepEqual(JSON.parse(beta.stdout), buildOpenApiDocument('beta', allRoutes()));
    const json = await runSvc(['openapi', '--beta', '-o', 'json']);
    assert.equal(json.stdout, beta.stdout);
  });
});
