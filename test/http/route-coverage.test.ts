/**
 * Issue 30 item 10: every route the server answers is in a contract. The walk goes over the router
 * of the App `svc serve` builds from the whole route table (not over the table itself), and each
 * (method, path) must be an operation of `/openapi.json` or `/openapi.beta.json`, or be classified
 * in the route table as a protocol endpoint or a UI asset. Before this, `POST
 * /v1/audit/checkpoint` and `GET /ui/step-up` were served and in neither document.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { App } from '../../src/http/app.js';
import { allRoutes } from '../../src/routes.js';
import { buildOpenApiDocument } from '../../src/contract/openapi.js';
import type { Services } from '../../src/serve/services.js';

const CLASSES = new Set(['protocol', 'ui-asset']);

test('every route the router answers is in an OpenAPI document or classified', () => {
  const app = new App({
    routes: allRoutes(),
    services: {} as Services,
    log: pino({ level: 'silent' }),
    tls: true,
    bodyLimit: 1024,
    timeoutMs: 1000,
  });
  const documented = new Set<string>();
  for (const which of ['stable', 'beta'] as const) {
    const doc = buildOpenApiDocument(which, allRoutes()) as { paths: Record<string, Record<string, unknown>> };
    for (const [p, ops] of Object.entries(doc.paths)) for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${p}`);
  }
  const served = app.served();
  assert.equal(served.length, allRoutes().length, 'the router holds every route of the table');
  const outside: string[] = [];
  const classified: string[] = [];
  for (const s of served) {
    const key = `${s.method} ${s.path}`;
    const unlisted = s.route.spec.unlisted as unknown;
    if (unlisted !== undefined) {
      // Classified: a known class, and then truly left out of both documents.
      if (!CLASSES.has(String(unlisted))) outside.push(`${key}: unknown class ${JSON.stringify(unlisted)}`);
      else if (documented.has(key)) outside.push(`${key}: classified ${String(unlisted)} but also documented`);
      else classified.push(`${key} (${String(unlisted)})`);
    } else if (!documented.has(key)) {
      outside.push(`${key}: in neither OpenAPI document`);
    }
  }
  assert.deepEqual(outside, []);
  // The protocol document, the step-up page, and the web console's pages and assets (docs/web.md): GETs only.
  const ui = classified.filter((c) => c.endsWith('(ui-asset)'));
  assert.deepEqual(classified.filter((c) => !c.endsWith('(ui-asset)')), ['GET /openapi.beta.json (protocol)']);
  assert.ok(ui.includes('GET /ui/step-up (ui-asset)') && ui.includes('GET / (ui-asset)'));
  assert.deepEqual(ui.filter((c) => !c.startsWith('GET ')), [], 'a UI asset is only ever read');
  assert.ok(documented.has('POST /v1/audit/checkpoint'), 'the on-demand checkpoint is in the core contract');
});
