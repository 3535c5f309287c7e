/**
 * The console's weight budget (docs/web.md): what `npm run build` ships, gzip-compressed as
 * `svc serve` sends it. The first page needs the entry script and the stylesheet only; the graph
 * library comes with the access map.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/server.js';
import { BUDGET_KB, bundleSizes } from './budget.js';

test('bundle budget: entry script, stylesheet and all scripts stay within their gzip budgets', () => {
  const s = bundleSizes();
  const kb = (n: number) => Math.round((n / 1024) * 10) / 10;
  assert.ok(s.entryJs > 0 && s.css > 0, 'the console was built into dist/web');
  assert.ok(s.entryJs + s.css <= BUDGET_KB.entry * 1024, `first page: ${kb(s.entryJs + s.css)} KB > ${BUDGET_KB.entry} KB`);
  assert.ok(s.css <= BUDGET_KB.css * 1024, `CSS: ${kb(s.css)} KB > ${BUDGET_KB.css} KB`);
  assert.ok(s.allJs <= BUDGET_KB.allJs * 1024, `all JS: ${kb(s.allJs)} KB > ${BUDGET_KB.allJs} KB`);
  // The index page names only the entry files: the graph chunk is not on the first page.
  const html = readFileSync(path.join(REPO_ROOT, 'dist', 'web', 'index.html'), 'utf8');
  assert.doesNotMatch(html, /graph-/);
});
