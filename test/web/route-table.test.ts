/** Every console route is in the route table, classified as a UI asset; the sign-in routes are beta API routes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allRoutes } from '../../src/routes.js';
import { buildOpenApiDocument } from '../../src/contract/openapi.js';
import { CONSOLE_SECTIONS } from '../../src/core/web-console/routes.js';

test('console routes: pages and assets are unlisted UI routes; browser sign-in is in the beta OpenAPI document', () => {
  const routes = allRoutes();
  const ui = routes.filter((r) => r.tags?.includes('ui'));
  for (const s of CONSOLE_SECTIONS) {
    assert.ok(ui.some((r) => r.path === `/${s}`), `/${s}`);
    assert.ok(ui.some((r) => r.path === `/${s}/{rest}`), `/${s}/{rest}`);
  }
  for (const p of ['/', '/assets/{file}', '/favicon.svg', '/ui/step-up']) assert.ok(ui.some((r) => r.path === p), p);
  for (const r of ui) {
    assert.equal(r.unlisted, 'ui-asset', `${r.path} is classified (unlisted UI), not an API operation`);
    assert.equal(r.method, 'GET');
  }
  const beta = buildOpenApiDocument('beta', routes) as { paths: Record<string, Record<string, unknown>> };
  const ops = beta.paths['/v1/m/identity/browser-session'] ?? {};
  assert.deepEqual(Object.keys(ops).sort(), ['delete', 'get', 'post']);
});
